"""The Workspace world as plain data, and how two worlds are compared.

A world is one JSON-able dict (so copying, pickling and hashing it need nothing special):

* `today` (ISO date), `clock` (minutes since today's midnight; each change advances it by one minute),
  `seq` (the counter created ids come from), `user` ({name, email}), `journal` (the records the last tool
  call changed, as [collection, key] pairs; bookkeeping, never compared);
* id-keyed collections (`ID_COLLECTIONS`): emails, events, contacts, notes, orders, payees, transactions,
  todos, messages; their records carry their own `id`;
* naturally keyed ones (`KEYED`): files (by absolute path; folders are records of type "folder"), products
  (by SKU), accounts, coupons (by code), projects and channels (by name); and `cart` ({items, coupon}).

Money is held in integer cents and shown in tools as numbers with two decimals.

Comparison (`canonical`): the records present initially are compared by key, the records created during the
episode by content only, since their ids depend on how many things were created before them; the fields a task
declares free (`FREE_FIELDS`: timestamps) are ignored, and text is compared without trailing spaces or blank
lines at either end. A reference to a created record (an order id in a payment's reference) compares as "<new>".

    >>> w = {c: {} for c in ID_COLLECTIONS + KEYED} | {"cart": {"items": {}, "coupon": ""}, "seq": 0}
    >>> a, b = fresh(w), fresh(w)
    >>> a["notes"][new_id(a, "n")] = {"id": "n1", "title": "x ", "time": "09:01"}
    >>> b["seq"] = 7; b["notes"][new_id(b, "n")] = {"id": "n8", "title": "x", "time": "10:30"}
    >>> canonical(a, initial_ids(w)) == canonical(b, initial_ids(w))
    True
"""

from __future__ import annotations

import json
import pickle
from datetime import date, timedelta

ID_COLLECTIONS = ("emails", "events", "contacts", "notes", "orders", "payees", "transactions", "todos", "messages")
KEYED = ("files", "products", "accounts", "coupons", "projects", "channels")
FREE_FIELDS = ("time",)  # what generated tasks declare free: every record's timestamp
NEW = "<new>"


class WorkspaceError(Exception):
    """A tool refused a call with a reason for the agent; the world is unchanged."""


def fresh(world: dict) -> dict:
    """An independent copy (a pickle round trip: the same as deepcopy on plain data, several times faster)."""
    return pickle.loads(pickle.dumps(world, pickle.HIGHEST_PROTOCOL))


# ---- time, ids, money ---------------------------------------------------------------------------------------
def now(world: dict) -> str:
    """The world's current time, "YYYY-MM-DD HH:MM"."""
    minutes = world["clock"]
    day = date.fromisoformat(world["today"]) + timedelta(days=minutes // 1440)
    return f"{day.isoformat()} {minutes % 1440 // 60:02d}:{minutes % 60:02d}"


def new_id(world: dict, prefix: str) -> str:
    world["seq"] += 1
    return f"{prefix}{world['seq']}"


def touch(world: dict, collection: str, key: str | None = None) -> None:
    """Record that a tool changed `world[collection][key]` (the whole `collection` when key is None)."""
    world["journal"].append([collection, key])


def money(cents: int) -> float:
    return round(cents / 100, 2)


def cents(amount, what: str = "amount") -> int:
    """An agent's amount in euros as integer cents; at most two decimals and more than zero."""
    if not abs(amount) <= 1e9:  # also NaN and infinity, which JSON parsers accept
        raise WorkspaceError(f"{what} {amount} is too large")
    value = round(float(amount) * 100)
    if abs(float(amount) * 100 - value) > 1e-6:
        raise WorkspaceError(f"{what} {amount} has more than two decimals")
    if value <= 0:
        raise WorkspaceError(f"{what} must be more than 0, got {amount}")
    return value


def show_money(value: int) -> str:
    return f"{value / 100:.2f}"


# ---- comparison -------------------------------------------------------------------------------------------
def initial_ids(world: dict) -> dict[str, frozenset]:
    """The keys of every id-keyed collection: records not among them were created during the episode."""
    return {c: frozenset(world[c]) for c in ID_COLLECTIONS}


def created_keys(world: dict, initial: dict[str, frozenset]) -> set[str]:
    return {k for c in ID_COLLECTIONS for k in world[c] if k not in initial[c]}


def form(value, created: set[str], free: frozenset = frozenset(FREE_FIELDS)):
    """A record as it is compared: free fields and ids dropped (records are matched by key, or by content when
    created), text trimmed, references to created records masked."""
    if isinstance(value, dict):
        return {k: form(v, created, free) for k, v in value.items() if k not in free and k != "id"}
    if isinstance(value, list):
        return [form(v, created, free) for v in value]
    if isinstance(value, str):
        if value in created:
            return NEW
        if "\n" in value or value[-1:] == " ":
            return "\n".join(line.rstrip() for line in value.strip("\n").split("\n")).strip("\n")
    return value


def form_key(value, created: set[str], free: frozenset = frozenset(FREE_FIELDS)) -> str:
    """A created record's comparable content as one string (created records are a multiset of these)."""
    return json.dumps(form(value, created, free), sort_keys=True, ensure_ascii=False)


def canonical(world: dict, initial: dict[str, frozenset], free: frozenset = frozenset(FREE_FIELDS)) -> dict:
    """Everything that must match the gold world, in a form where free fields cannot make a difference."""
    created = created_keys(world, initial)
    out = {"cart": form(world["cart"], created, free)}
    for c in ID_COLLECTIONS:
        kept = {k: form(r, created, free) for k, r in world[c].items() if k not in created}
        out[c] = (kept, sorted(form_key(r, created, free) for k, r in world[c].items() if k in created))
    for c in KEYED:
        out[c] = {k: form(r, created, free) for k, r in world[c].items()}
    return out


def same_world(world: dict, gold: dict, initial: dict[str, frozenset], free: frozenset = frozenset(FREE_FIELDS),
               keys=None) -> bool:
    """`canonical(world) == canonical(gold)`, fast. Records equal as they are need no normalising; `keys`, the
    (collection, key) pairs either run touched (None for the cart's key), limits the check to those, since both
    worlds started as `initial` and every tool names what it changes."""
    if keys is None:
        keys = {("cart", None)} | {(c, k) for c in KEYED + ID_COLLECTIONS for k in world[c].keys() | gold[c].keys()}
    mine = {k for c, k in keys if c in initial and k not in initial[c] and k in world[c]}
    theirs = {k for c, k in keys if c in initial and k not in initial[c] and k in gold[c]}
    for c, k in keys:
        if c == "cart":
            if world["cart"] != gold["cart"] and form(world["cart"], mine, free) != form(gold["cart"], theirs, free):
                return False
        elif k not in mine and k not in theirs:
            x, y = world[c].get(k), gold[c].get(k)
            if x != y and (x is None or y is None or form(x, mine, free) != form(y, theirs, free)):
                return False
    for c in {c for c, _ in keys if c in initial}:
        if sorted(form_key(world[c][k], mine, free) for k in mine.intersection(world[c])) != \
                sorted(form_key(gold[c][k], theirs, free) for k in theirs.intersection(gold[c])):
            return False
    return True


def differences(world: dict, gold: dict, initial: dict[str, frozenset], free: frozenset = frozenset(FREE_FIELDS),
                limit: int = 5) -> list[str]:
    """Where `world` departs from `gold` (collection and key, or "created"), for diagnostics and tests."""
    mine, theirs, out = canonical(world, initial, free), canonical(gold, initial, free), []
    for c in mine:
        a, b = mine[c], theirs[c]
        if c in ID_COLLECTIONS:
            out += [f"{c}[{k}]" for k in sorted(set(a[0]) | set(b[0])) if a[0].get(k) != b[0].get(k)]
            out += [f"{c}: created records differ"] if a[1] != b[1] else []
        elif c == "cart":
            out += ["cart"] if a != b else []
        else:
            out += [f"{c}[{k}]" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return out[:limit]
