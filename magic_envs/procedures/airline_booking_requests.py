"""The booking request kinds of the airline task planner (a one-way or round trip of direct flights, a one-stop
trip), and the helpers the other request kinds (`airline_requests`) share with them: offering the bookable
flights and drawing a new passenger."""

from __future__ import annotations

import json

from magic_envs.procedures import airline_data, airline_tools
from magic_envs.procedures import airline_wording as say
from magic_envs.procedures.airline_rules import best_option, bookable, free_bags, price_of
from magic_envs.procedures.airline_script import Redraw, Rejected, Request, Script
from magic_envs.procedures.airline_tools import BAG_PRICE, CABINS, INSURANCE_PRICE

PREFERENCES = {"cheapest": "The cheapest one, please.", "earliest": "The one that leaves earliest, please.",
               "latest": "The one that leaves latest, please."}


class Bookings(Script):
    """The booking request kinds and the helpers they share with the others, as methods of the planner."""

    def offer(self, req: Request, options: list, cabin: str, n: int, lead: str, question: str = "Which flight "
              "would you like?"):
        """List the bookable options and take the one the customer's preference picks."""
        prefs = [p for p in PREFERENCES if best_option(options, cabin, p) is not None]
        if not prefs:
            raise Redraw
        preference = req.preference or self.pick(prefs)
        if preference not in prefs:
            raise Rejected(f"no unique {preference} option")
        req.preference = preference
        self.ask(req, f"{lead}: " + "; ".join(say.option(o, cabin) for o in options) + f". {question}",
                 "which flight", PREFERENCES[preference])
        return best_option(options, cabin, preference)

    def new_person(self) -> dict:
        return {"first_name": self.pick(self.words["first"]), "last_name": self.pick(self.words["last"]),
                "dob": f"{int(self.rng.integers(1950, 2010))}-{int(self.rng.integers(1, 13)):02d}-"
                       f"{int(self.rng.integers(1, 29)):02d}"}

    def _book_onestop(self, req: Request) -> None:
        self._book(req, onestop=True)

    def _book(self, req: Request, onestop: bool = False) -> None:
        user = self.user()
        trip = self.itinerary(onestop)
        origin, destination, dates = trip["origin"], trip["destination"], trip["dates"]
        cabin, n = trip["cabin"], trip["n"]
        name = (lambda code: airline_data.AIRPORT_CITIES[code]) if req.mode == "cities" else (lambda code: code)
        round_trip, req.preference = len(dates) == 2, trip["preference"]
        req.say = (f"I'd like to book a {'round trip' if round_trip else 'one-way trip'} from {name(origin)} to "
                   f"{name(destination)}, leaving on {say.day(dates[0])}"
                   + (f" and coming back on {say.day(dates[1])}." if round_trip else "."))
        me = {"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"], "dob": user["dob"]}
        others = [dict(p) for p in user["saved_passengers"] if p != me]
        passengers = [me] + [others.pop(int(self.rng.integers(len(others)))) if others and self.rng.random() < 0.6
                             else self.new_person() for _ in range(n - 1)]
        listed = [f"{say.person(p)}, born {p['dob']}" for p in passengers]
        self.ask(req, "Who will be traveling? Please give me the full name and date of birth of each traveler.",
                 "who will be traveling", f"Just me: {listed[0]}." if n == 1 else
                 f"Me ({listed[0]}) and " + " and ".join(listed[1:]) + ".")
        if req.mode == "cities":
            req.unknown.append("the airport codes of the cities you fly between")
            self.call(req.index, "list_all_airports")
        self.ask(req, "Which cabin would you like: basic economy, economy or business?", "which cabin",
                 f"{say.cabin(cabin).capitalize()}, please.")
        chosen, legs = [], [(origin, destination, dates[0])] + ([(destination, origin, dates[1])] if round_trip else [])
        for k, (a, b, date) in enumerate(legs):
            tool = "search_onestop_flight" if onestop else "search_direct_flight"
            found = self.call(req.index, tool, origin=a, destination=b, date=date)
            lead = (f"Here are the {'one-stop connections' if onestop else 'direct flights'} from {a} to {b} on "
                    f"{date} with {say.cabin(cabin)} seats for {say.plural(n, 'passenger')}")
            chosen.append(self.offer(req, bookable(found, cabin, n), cabin, n, lead, "Which flight would you like"
                                     + (" for the return?" if k else "?")))
        flights = [{"flight_number": leg["flight_number"], "date": date} for option, (_, _, date) in zip(chosen, legs)
                   for leg in (option if isinstance(option, list) else [option])]
        if onestop:  # the second leg may leave the next day
            flights = [{"flight_number": leg["flight_number"], "date": leg["date"]} for leg in chosen[0]]
        bags = int(self.rng.choice([0, 0, 1, 2, 3, 4]))
        self.ask(req, "How many checked bags will you bring in total?", "how many checked bags",
                 f"{say.plural(bags, 'checked bag')} in total." if bags else "No checked bags.")
        insured = bool(self.rng.random() < 0.5)
        self.ask(req, f"Would you like travel insurance? It costs {say.money(INSURANCE_PRICE)} per passenger and gives "
                      "a full refund if you cancel for health or weather reasons.", "travel insurance",
                 "Yes, I'd like travel insurance." if insured else "No travel insurance, thanks.")
        per = free_bags(self.rules, user["membership"], cabin)
        nonfree = max(0, bags - per * n)
        fares = sum(price_of(o, cabin) for o in chosen) * n
        total = fares + INSURANCE_PRICE * n * insured + BAG_PRICE * nonfree
        payments, phrase = self.booking_payment(total)
        self.ask(req, "Which payment method would you like to use?", "payment method", phrase)
        paid = " and ".join(f"{say.money(p['amount'])} on {p['payment_id']}" for p in payments)
        methods = self.user()["payment_methods"]
        lost = sum(methods[p["payment_id"]]["amount"] - p["amount"] for p in payments
                   if methods[p["payment_id"]]["source"] == "certificate")
        if lost:
            paid += f" (the unused {say.money(lost)} of the certificate is not refunded)"
        self.confirm(
            f"Here is the booking: a {'round trip' if round_trip else 'one-way trip'} from {origin} to {destination} "
            f"in {say.cabin(cabin)} for {', '.join(say.person(p) for p in passengers)}; flights "
            + "; ".join(f"{f['flight_number']} on {f['date']}" for f in flights)
            + f". Fares {say.money(fares)} for {say.plural(n, 'passenger')}; {say.plural(bags, 'checked bag')}, "
            f"{per * n} free ({per} per passenger as a {user['membership']} member), {nonfree} paid at "
            f"{say.money(BAG_PRICE)} each; travel insurance {'yes' if insured else 'no'}. The total is "
            f"{say.money(total)}, paid {paid}.")
        booked = self.call(req.index, "book_reservation", user_id=self.user_id, origin=origin, destination=destination,
                           flight_type="round_trip" if round_trip else "one_way", cabin=cabin, flights=flights,
                           passengers=passengers, payment_methods=payments, total_baggages=bags,
                           nonfree_baggages=nonfree, insurance="yes" if insured else "no")
        self.msg(f"Your trip is booked: the reservation id is {booked['reservation_id']}.")

    def itinerary(self, onestop: bool) -> dict:
        """A trip the airline can carry: route, dates, cabin and party size with a bookable choice each way."""
        airports = sorted({f["origin"] for f in self.db["flights"].values()})
        for _ in range(60):
            cabin, n = self.pick(CABINS), int(self.rng.choice([1, 1, 2, 2, 3]))
            origin, destination = (str(x) for x in self.rng.choice(airports, size=2, replace=False))
            day = int(self.rng.integers(airline_data.TODAY + 1, airline_data.DAYS - 1))
            dates = [f"2024-05-{day:02d}"]
            if not onestop and self.rng.random() < 0.45:
                dates.append(f"2024-05-{min(airline_data.DAYS, day + int(self.rng.integers(2, 8))):02d}")
            legs = [(origin, destination, dates[0])] + ([(destination, origin, dates[1])] if len(dates) == 2 else [])
            tool = "search_onestop_flight" if onestop else "search_direct_flight"
            found = [bookable(json.loads(airline_tools.call(self.db, tool, {"origin": a, "destination": b,
                                                                            "date": d}, quirks=False)), cabin, n)
                     for a, b, d in legs]
            direct = onestop and json.loads(airline_tools.call(
                self.db, "search_direct_flight", {"origin": origin, "destination": destination, "date": dates[0]},
                quirks=False))
            prefs = [p for p in PREFERENCES if all(o and best_option(o, cabin, p) is not None for o in found)]
            if prefs and not direct and len(found[0]) <= 6:
                return {"origin": origin, "destination": destination, "dates": dates, "cabin": cabin, "n": n,
                        "preference": self.pick(prefs)}
        raise Redraw

    def booking_payment(self, total: int) -> tuple[list[dict], str]:
        """How the customer pays a booking, within the policy (one card, or a gift card that covers it, or a
        certificate topped up by a card), and how they say it."""
        user = self.user()
        methods = user["payment_methods"]
        cards = [k for k, pm in methods.items() if pm["source"] == "credit_card"]
        ways = [[(card, total)] for card in cards]
        ways += [[(g, total)] for g, pm in methods.items() if pm["source"] == "gift_card" and pm["amount"] >= total]
        for cert, pm in methods.items():
            if pm["source"] == "certificate":
                used = min(int(pm["amount"]), total)
                ways += [[(cert, used)] + ([(card, total - used)] if total > used else []) for card in cards[:1]]
        way = self.pick(ways)
        phrase = f"Please use {say.payment(user, way[0][0])}" + (
            f" first, and put the rest on {say.payment(user, way[1][0])}." if len(way) == 2 else ".")
        return [{"payment_id": pm_id, "amount": amount} for pm_id, amount in way], phrase
