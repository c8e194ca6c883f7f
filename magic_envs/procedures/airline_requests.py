"""The request kinds of the airline task planner: for each, what the customer says and how a policy-following
agent serves it (questions, tool calls, confirmation, the closing message), and how the request ends. Each
method `_<kind>` checks that the policy reaches the decision the request was drawn for (`Script.expect`). The
booking kinds, and the helpers they share with these, are in `airline_booking_requests`."""

from __future__ import annotations

from magic_envs.procedures import airline_data
from magic_envs.procedures import airline_wording as say
from magic_envs.procedures.airline_booking_requests import Bookings
from magic_envs.procedures.airline_rules import (
    REASON_WORDS,
    TODAY,
    airline_cancelled,
    bookable,
    cancel_grounds,
    compensation_grounds,
    free_bags,
    segment_status,
    was_flown,
)
from magic_envs.procedures.airline_script import Redraw, Rejected, Request
from magic_envs.procedures.airline_tools import BAG_PRICE
from magic_envs.procedures.service import TRANSFER_TOOL

TRANSFER_NOTICE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
GOALS = ("file a claim for a checked bag that the airline lost on my last trip",
         "arrange wheelchair assistance at the airport for my next trip",
         "book a trip for a group of eight colleagues", "pay for an upgrade with my frequent flyer miles",
         "complain about how the gate staff treated me yesterday")
REASONS = {"change_of_plan": "My plans changed.", "airline_cancelled": "The airline cancelled my flight.",
           "health": "I am sick and my doctor told me not to travel.",
           "weather": "A big storm is forecast at my destination.", "other": "I just don't want to go anymore."}


class Requests(Bookings):
    """The request kinds, as methods of the planner; the booking kinds are in `Bookings`."""

    def _cancel(self, req: Request) -> None:
        req.say = self.pick(["I need to cancel one of my reservations.", "I'd like to cancel a reservation, please."])
        r = self.locate(req)
        self.check_flights(req, r)
        rid, n = r["reservation_id"], len(r["passengers"])
        if was_flown(self.db, r):
            self.expect(req, "cancel_flown")
            self.call(req.index, TRANSFER_TOOL, summary=f"User {self.user_id} wants to cancel reservation {rid}, "
                                                        "part of which has already been flown.")
            self.msg(f"Part of reservation {rid} has already been flown, so its cancellation must be handled by a "
                     f"human agent. {TRANSFER_NOTICE}")
            return req.end("transfer", "transferred to a human agent")
        reason = self.reason(req, r)
        self.ask(req, "What is the reason for the cancellation?", "reason for", REASONS[reason])
        grounds = cancel_grounds(self.db, r, reason, self.rules)
        if not grounds:
            self.expect(req, "cancel_refused")
            cover = (f"its travel insurance does not cover {REASON_WORDS[reason]}" if r["insurance"] == "yes"
                     else "it has no travel insurance")
            self.msg(f"I'm sorry, but reservation {rid} is not eligible for cancellation: it was booked on "
                     f"{r['created_at'][:10]}, more than {self.rules['cancel_hours']} hours ago; it is in "
                     f"{say.cabin(r['cabin'])}; the airline cancelled none of its flights; and {cover}. It stays as it "
                     "is.")
            return req.end("refused", "not eligible")
        self.expect(req, "cancel")
        paid = sum(p["amount"] for p in r["payment_history"])
        self.confirm(f"Reservation {rid} can be cancelled because {grounds[0]}. I will cancel the whole reservation: "
                     f"{self.trip(r)} ({say.segments(r)}), {say.cabin(r['cabin'])}, {say.plural(n, 'passenger')}. The "
                     f"{say.money(paid)} paid goes back to the original payment method: at once for a gift card, "
                     "within 5 to 7 business days otherwise.")
        self.call(req.index, "cancel_reservation", reservation_id=rid)
        self.msg(f"Reservation {rid} is now cancelled, and the refund is on its way.")

    def reason(self, req: Request, r: dict) -> str:
        """A reason the customer gives that leads to the outcome the request was drawn for."""
        if req.kind == "cancel_refused":
            return self.pick(["change_of_plan", "other"] if r["insurance"] == "yes" else
                             ["change_of_plan", "other", "health", "weather"])
        if req.affected:
            return "change_of_plan"
        choices = [k for k in REASONS if cancel_grounds(self.db, r, k, self.rules)
                   and (k != "airline_cancelled" or airline_cancelled(self.db, r))]
        return self.pick(choices)

    def _change_flights(self, req: Request) -> None:
        req.say = "I'd like to move a flight of one of my reservations to another date."
        r = self.locate(req)
        rid, n, cabin = r["reservation_id"], len(r["passengers"]), r["cabin"]
        if cabin == "basic_economy":
            self.expect(req, "change_basic_refused")
            self.msg(f"I'm sorry, but reservation {rid} is in basic economy, and the flights of a basic economy "
                     "reservation cannot be changed.")
            return req.end("refused", "basic economy")
        self.expect(req, "change_flights")
        moves = self.moves(self.db, r)
        if not moves:
            raise Redraw  # an earlier request of the task took the last seats
        k, date = self.pick(moves)
        old = r["flights"][k]
        part = "flight" if r["flight_type"] == "one_way" else ("outbound flight", "return flight")[k]
        self.ask(req, "Which part of the trip should move, and to what date?", "to what date",
                 f"The {part} on {say.day(old['date'])}: I'd like to fly on {say.day(date)} instead.")
        found = self.call(req.index, "search_direct_flight", origin=old["origin"], destination=old["destination"],
                          date=date)
        choice = self.offer(req, bookable(found, cabin, n), cabin, n,
                            f"Here are the direct flights from {old['origin']} to {old['destination']} on {date} "
                            f"with {say.cabin(cabin)} seats for {say.plural(n, 'passenger')}")
        price = choice["prices"][cabin]
        diff = (price - old["price"]) * n
        pm_id = self.pay(req, diff, "Which payment method would you like to use for the price difference?")
        flights = [{"flight_number": s["flight_number"], "date": s["date"]} for s in r["flights"]]
        flights[k] = {"flight_number": choice["flight_number"], "date": date}
        self.confirm(f"Here is the change to reservation {rid} ({say.cabin(cabin)}, {say.plural(n, 'passenger')}): "
                     f"flight {old['flight_number']} on {old['date']} at {say.money(old['price'])} per passenger "
                     f"becomes flight {choice['flight_number']} on {date} at {say.money(price)} per passenger; the "
                     f"other flights stay as they are. {self.difference(diff, pm_id)}")
        self.call(req.index, "update_reservation_flights", reservation_id=rid, cabin=cabin, flights=flights,
                  payment_id=pm_id)
        self.msg(f"Done: reservation {rid} now has flight {choice['flight_number']} on {date}.")

    def _change_cabin(self, req: Request) -> None:
        req.say = "I'd like to change the cabin class of one of my reservations."
        r = self.locate(req)
        self.check_flights(req, r)
        rid, n = r["reservation_id"], len(r["passengers"])
        if was_flown(self.db, r):
            self.expect(req, "cabin_flown_refused")
            self.msg(f"I'm sorry, but a flight of reservation {rid} has already been flown, so its cabin can no "
                     "longer be changed.")
            return req.end("refused", "flown")
        self.expect(req, "change_cabin")
        cabins = self.new_cabins(self.db, r)
        if not cabins:
            raise Redraw
        cabin = self.pick(cabins)
        self.ask(req, "Which cabin would you like instead: basic economy, economy or business?", "which cabin",
                 f"{say.cabin(cabin).capitalize()}, please.")
        prices = []
        for segment in r["flights"]:
            found = self.call(req.index, "search_direct_flight", origin=segment["origin"],
                              destination=segment["destination"], date=segment["date"])
            prices.append(next(f for f in found if f["flight_number"] == segment["flight_number"])["prices"][cabin])
        diff = (sum(prices) - sum(s["price"] for s in r["flights"])) * n
        pm_id = self.pay(req, diff, "Which payment method would you like to use for the price difference?")
        now = "; ".join(f"{s['flight_number']} at {say.money(p)}" for s, p in zip(r["flights"], prices))
        self.confirm(f"Here is the change to reservation {rid}: every flight moves from {say.cabin(r['cabin'])} to "
                     f"{say.cabin(cabin)} at its current price per passenger ({now}), for "
                     f"{say.plural(n, 'passenger')}. {self.difference(diff, pm_id)}")
        flights = [{"flight_number": s["flight_number"], "date": s["date"]} for s in r["flights"]]
        self.call(req.index, "update_reservation_flights", reservation_id=rid, cabin=cabin, flights=flights,
                  payment_id=pm_id)
        self.msg(f"Done: reservation {rid} is now in {say.cabin(cabin)}.")

    def _add_bags(self, req: Request) -> None:
        user, r0 = self.user(), self.db["reservations"][req.target]
        extra = self.pick(self.bag_counts(user, r0, req.affected))
        req.say = f"I'd like to add {say.plural(extra, 'checked bag')} to one of my reservations."
        r = self.locate(req)
        rid, n = r["reservation_id"], len(r["passengers"])
        per = free_bags(self.rules, user["membership"], r["cabin"])
        total = r["total_baggages"] + extra
        nonfree = max(r["nonfree_baggages"], total - per * n)
        fee = BAG_PRICE * (nonfree - r["nonfree_baggages"])
        allowance = (f"As a {user['membership']} member in {say.cabin(r['cabin'])}, each passenger has "
                     f"{say.plural(per, 'free checked bag')}, {per * n} in all for this reservation")
        if fee:
            question = (f"{allowance}, so {say.plural(nonfree - r['nonfree_baggages'], 'new bag')} cost "
                        f"{say.money(BAG_PRICE)} each: {say.money(fee)}. Which payment method would you like to use?")
        else:
            question = f"{allowance}, so the new bags are free. Which payment method would you like to keep on file?"
        pm_id = self.pay(req, fee, question)
        fee_text = f"The fee of {say.money(fee)} will be charged to {pm_id}." if fee else "There is no fee."
        self.confirm(f"I will update reservation {rid}: {total} checked bags instead of {r['total_baggages']}, "
                     f"{nonfree} of them paid. {fee_text}")
        self.call(req.index, "update_reservation_baggages", reservation_id=rid, total_baggages=total,
                  nonfree_baggages=nonfree, payment_id=pm_id)
        self.msg(f"Done: reservation {rid} now has {say.plural(total, 'checked bag')}.")

    def _update_passenger(self, req: Request) -> None:
        req.say = "I need to change a passenger's details on one of my reservations."
        r = self.locate(req)
        rid, passengers = r["reservation_id"], [dict(p) for p in r["passengers"]]
        k = int(self.rng.integers(len(passengers)))
        old, new = passengers[k], self.new_person()
        if self.rng.random() < 0.5:
            new = dict(old, dob=new["dob"])
            answer = f"{say.person(old)}'s date of birth is wrong: it should be {new['dob']}."
        else:
            answer = f"Please replace {say.person(old)} with {say.person(new)}, born {new['dob']}."
        if new == old:
            raise Redraw
        passengers[k] = new
        self.ask(req, "Which passenger should change, and what are the new details?", "which passenger", answer)
        self.confirm(f"I will update the passengers of reservation {rid}: {say.person(old)} becomes {say.person(new)}, "
                     f"born {new['dob']}; the other passengers stay as they are.")
        self.call(req.index, "update_reservation_passengers", reservation_id=rid, passengers=passengers)
        self.msg(f"Done: the passengers of reservation {rid} are updated.")

    def _flight_status(self, req: Request) -> None:
        flight = self.pick(list(self.db["flights"].values()))
        day = airline_data.TODAY if self.rng.random() < 0.6 else int(self.rng.integers(1, airline_data.TODAY))
        date = f"2024-05-{day:02d}"
        when = "today" if date == TODAY else f"on {say.day(date)}"
        req.say = f"Could you check the status of flight {flight['flight_number']} {when}?"
        status = self.call(req.index, "get_flight_status", flight_number=flight["flight_number"], date=date)
        self.msg(f"The status of flight {flight['flight_number']} on {date} is: {status}.")
        req.end("told", status)

    def _total_paid(self, req: Request) -> None:
        req.say = "How much have I paid in total for one of my reservations?"
        r = self.locate(req)
        total = sum(p["amount"] for p in r["payment_history"])
        self.msg(f"For reservation {r['reservation_id']} you have paid {say.money(total)} in total.")
        req.end("told", str(total))

    def _compensation(self, req: Request) -> None:
        r0 = self.db["reservations"][req.target]
        segment = self.pick([s for s in r0["flights"]
                             if s["date"] <= TODAY and segment_status(self.db, s) == "cancelled"])
        req.say = (f"My flight {segment['flight_number']} on {say.day(segment['date'])} was cancelled, and I would "
                   "like to be compensated for it.")
        r = self.locate(req)
        status = self.call(req.index, "get_flight_status", flight_number=segment["flight_number"],
                           date=segment["date"])
        if status != "cancelled":
            raise Rejected(f"flight status {status}")
        rid, n, grounds = r["reservation_id"], len(r["passengers"]), compensation_grounds(self.user(), r)
        if not grounds:
            self.expect(req, "compensation_refused")
            self.msg(f"I'm sorry, but you are not eligible for compensation: you are a regular member, "
                     f"reservation {rid} has no travel insurance, and it is not in business class.")
            return req.end("refused", "not eligible")
        self.expect(req, "compensation")
        amount = self.rules["certificate"] * n
        self.confirm(f"Flight {segment['flight_number']} on {segment['date']} was indeed cancelled by the airline. "
                     f"Because {grounds[0]}, you are eligible for a travel certificate of "
                     f"{say.money(self.rules['certificate'])} per passenger: {say.money(amount)} for the "
                     f"{say.plural(n, 'passenger')} of reservation {rid}, added to your profile.")
        self.call(req.index, "send_certificate", user_id=self.user_id, amount=amount)
        self.msg(f"Done: a travel certificate of {say.money(amount)} is now in your profile.")

    def _other_user_refused(self, req: Request) -> None:
        rid = req.target
        req.say = self.pick([f"Could you cancel reservation {rid}? It is my friend's trip and she asked me to.",
                             f"Could you add a checked bag to reservation {rid}? My colleague booked it.",
                             f"Could you tell me the flights of reservation {rid}? My brother booked it."])
        self.msg(f"I'm sorry, but reservation {rid} is not in your profile, and I can only help with your own "
                 "reservations.")
        req.end("refused", rid)

    def _remove_bags_refused(self, req: Request) -> None:
        req.say = "I'd like to remove a checked bag from one of my reservations and get a refund for it."
        self.msg("I'm sorry, but checked bags can be added to a reservation, never removed, so I cannot refund it.")
        req.end("refused", "removed")

    def _passenger_count_refused(self, req: Request) -> None:
        req.say = f"I'd like to add my friend {say.person(self.new_person())} as a passenger on one of my reservations."
        self.msg("I'm sorry, but the number of passengers on a reservation cannot change, so I cannot add a "
                 "passenger. Their names and dates of birth can change, though.")
        req.end("refused", "number of passengers")

    def _insurance_refused(self, req: Request) -> None:
        req.say = "I'd like to add travel insurance to one of my reservations."
        self.msg("I'm sorry, but travel insurance can only be bought with the booking; it cannot be added later.")
        req.end("refused", "insurance")

    def _transfer(self, req: Request) -> None:
        goal = self.pick(GOALS)
        req.say = f"I'd like to {goal}."
        self.call(req.index, TRANSFER_TOOL, summary=f"User {self.user_id} wants to {goal}; this is outside what "
                                                    "I can do.")
        self.msg(f"That is something a human agent has to handle. {TRANSFER_NOTICE}")
        req.end("transfer", "transferred to a human agent")
