"""The service databases: plain JSON dicts in tau2-bench's schema, hashed as tau2-bench hashes them.

A database is `{table: {id: record}}` (retail: products, users, orders; airline: flights, users,
reservations). Tools read and change it in place; a failing tool raises `ToolError` before it changes
anything. `db_hash` is tau2-bench's `get_db_hash` (sha256 of the sorted-key JSON dump), so the DB part of
the reward compares whole states, side effects included, and our hashes of tau2's own data equal tau2's.

    >>> db_hash({"users": {}}) == db_hash(json.loads('{"users": {}}'))
    True
"""

from __future__ import annotations

import copy
import hashlib
import json


class ToolError(Exception):
    """A tool refused a call; the agent sees "Error: <message>" and the database is unchanged."""


def db_hash(db: dict) -> str:
    """sha256 of `json.dumps(db, sort_keys=True, default=str)`, as tau2-bench's get_db_hash."""
    return hashlib.sha256(json.dumps(db, sort_keys=True, default=str).encode()).hexdigest()


def fresh_copy(db: dict) -> dict:
    """An independent copy, so a tool run on it never touches the original."""
    return copy.deepcopy(db)


def dump(value) -> str:
    """A tool result as tau2-bench prints it: strings as they are, anything else as JSON in field order."""
    return value if isinstance(value, str) else json.dumps(value, default=str)
