"""The oracle agent's primitives for the airline task planner: a script of messages and tool calls written
while the calls run on a working copy of the task's database, and the checks that keep it honest.

`Script` is the base of the planner (`airline_tasks._Planner`); the request kinds (`airline_requests`) are
written with these primitives. A drawn customer that cannot carry a request raises `Redraw` (part of
sampling); a script that breaks a rule it must keep raises `Rejected` (a generator bug)."""

from __future__ import annotations

import json

from magic_envs.core.grammar import format_tool_call
from magic_envs.procedures import airline_data, airline_tools
from magic_envs.procedures import airline_wording as say
from magic_envs.procedures.airline_rules import TODAY, new_reservation_id, trip_key
from magic_envs.procedures.database import ToolError, fresh_copy


class Redraw(Exception):
    """The drawn customer cannot carry the drawn requests: draw again (part of sampling, not a rejection)."""


class Rejected(Exception):
    """The oracle's own run broke a rule it must keep: a generator bug."""


class Request:
    """One request while it is planned: what the customer says and knows, and how it ends."""

    def __init__(self, index: int, kind: str, target, mode):
        self.index, self.kind, self.target, self.mode = index, kind, target, mode
        self.say, self.facts, self.done, self.communicate = "", {}, "state", []
        self.preference, self.affected, self.unknown = "", False, []
        self.asked: list[tuple[str, str]] = []

    def end(self, done: str, phrase: str) -> None:
        self.done, self.communicate = done, [phrase]


class Script:
    """Writes the oracle script. The planner sets `env`, `rng`, `rules`, `words` and, per draft, `db` (the
    working copy), `user_id`, `owned`, `script`, `actions`, `seen` and `profile`."""

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def msg(self, text: str) -> None:
        self.script.append(text)

    def call(self, index: int, name: str, **arguments):
        arguments = json.loads(json.dumps(arguments))
        self.script.append(format_tool_call(name, arguments))
        self.actions.append({"name": name, "arguments": arguments, "request": index})
        if name in airline_tools.WRITE_TOOLS:
            self.own("users", self.user_id)
            reservation = self.own("reservations", arguments.get("reservation_id"))
            for segment in (reservation or {}).get("flights", []) + arguments.get("flights", []):
                self.own("flights", segment["flight_number"])
        try:
            result = airline_tools.call(self.db, name, json.loads(json.dumps(arguments)), quirks=False)
        except ToolError as error:
            raise Rejected(f"the oracle's {name} failed: {error}") from error
        try:
            return json.loads(result)
        except ValueError:
            return result

    def own(self, table: str, key):
        """Copy a record of the working database before a write changes it; the record (None if absent)."""
        if key in self.db[table] and (table, key) not in self.owned:
            self.db[table][key] = fresh_copy(self.db[table][key])
            self.owned.add((table, key))
        return self.db[table].get(key)

    def ask(self, req: Request, text: str, key: str, answer: str) -> None:
        req.facts[key] = answer
        req.asked.append((text, key))
        self.msg(text)

    def confirm(self, details: str) -> None:
        self.msg(f"{details} Shall I proceed (yes/no)?")

    def expect(self, req: Request, kind: str) -> None:
        """The policy's decision must be the one the request was drawn for."""
        if req.kind != kind:
            raise Rejected(f"a {req.kind} request was handled as {kind}")

    def check_questions(self, req: Request) -> None:
        """Each question reaches exactly the fact it asks for, and none reads as a confirmation request."""
        from magic_envs.procedures.user_sim import _ASKS_CONFIRMATION

        for text, key in req.asked:
            low = text.lower()
            matched = {k for k in req.facts if any(w.strip().lower() in low for w in k.split("|"))}
            if matched != {key} or "user id" in low or _ASKS_CONFIRMATION.search(low):
                raise Rejected(f"the question {text!r} reaches {matched}, not {key!r}")

    def user(self) -> dict:
        return self.db["users"][self.user_id]

    def locate(self, req: Request) -> dict:
        """Find the request's reservation as an agent does: by the id the customer gives, or among the
        customer's reservations from their description."""
        target, question = self.db["reservations"][req.target], "Could you tell me the reservation id?"
        if req.mode is None:
            self.ask(req, question, "reservation id", f"The reservation id is {req.target}.")
        elif req.mode == "unknown":
            self.ask(req, question, "reservation id", "I don't have the reservation id at hand.")
            lead = "No problem."
        else:  # a wrong id first (letters only, so it never contains a number the agent must say later)
            wrong = new_reservation_id(self.rng, self.db, letters_only=True)
            self.ask(req, question, "reservation id", f"I think it is {wrong}.")
            lead = f"I could not find {wrong} among the reservations in your profile."
        if req.mode is not None:
            cities = [airline_data.AIRPORT_CITIES[target[end]] for end in ("origin", "destination")]
            req.unknown.append(f"the reservation id of your trip from {cities[0]} to {cities[1]}")
            trip = "one-way trip" if target["flight_type"] == "one_way" else "round trip"
            self.ask(req, f"{lead} Could you describe the trip: where it goes from and to, and the date of its "
                          "first flight?", "describe the trip",
                     f"It is my {trip} from {cities[0]} to {cities[1]}, first flight on "
                     f"{say.day(target['flights'][0]['date'])}.")
            for rid in self.profile:
                if rid in self.seen and trip_key(self.db["reservations"][rid]) != trip_key(target):
                    continue
                found = self.call(req.index, "get_reservation_details", reservation_id=rid)
                self.seen.add(rid)
                if trip_key(found) == trip_key(target):
                    break
        found = self.call(req.index, "get_reservation_details", reservation_id=req.target) \
            if req.mode is None else found
        self.seen.add(req.target)
        if found["reservation_id"] != req.target:
            raise Rejected(f"the description found {found['reservation_id']}, not {req.target}")
        return found

    def check_flights(self, req: Request, r: dict) -> None:
        """The status of every flight of the reservation up to today (flown? cancelled by the airline?)."""
        for segment in r["flights"]:
            if segment["date"] <= TODAY:
                self.call(req.index, "get_flight_status", flight_number=segment["flight_number"],
                          date=segment["date"])

    def pay(self, req: Request, amount: int, question: str) -> str:
        """Ask which card or gift card pays `amount` (negative: receives the refund)."""
        user = self.user()
        usable = [k for k, pm in user["payment_methods"].items() if pm["source"] == "credit_card"
                  or (pm["source"] == "gift_card" and pm["amount"] >= amount)]
        if not usable:
            raise Redraw
        pm_id = self.pick(usable)
        self.ask(req, question, "payment method", f"Please use {say.payment(user, pm_id)}.")
        return pm_id

    def difference(self, amount: int, pm_id: str) -> str:
        if amount > 0:
            return f"The price difference of {say.money(amount)} will be charged to {pm_id}."
        if amount < 0:
            return f"The price difference of {say.money(-amount)} will be refunded to {pm_id}."
        return "There is no price difference to pay."

    def trip(self, r: dict) -> str:
        kind = "one-way trip" if r["flight_type"] == "one_way" else "round trip"
        return f"the {kind} from {r['origin']} to {r['destination']}"
