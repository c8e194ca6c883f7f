"""The Workspace tools: a registry of functions with OpenAI schemas, real semantics on the world, one dispatcher.

Each app module declares its tools with `@tool`: `workspace_office` (files, mail), `workspace_agenda` (calendar,
contacts, notes), `workspace_money` (shop, bank) and `workspace_team` (the to-do and chat apps only `ood` tasks
use). A tool is
`fn(world, **arguments)`; it checks everything before it changes anything and raises `WorkspaceError` with a
reason an agent can act on, so a refused call leaves the world as it was. Every change advances the world's
clock by a minute (`changed`) and names the records it touched (`touch`), which is how gold sub-goals learn what
they must achieve. Tools marked `flaky` run on a remote service that may answer "busy" (`workspace.py`
decides when, from the task's fault seed and the call counter).

    >>> from magic_envs.tool_execution.workspace_world import build_world
    >>> w = build_world(0)
    >>> call(w, "create_folder", {"path": "/finance/archive"})
    {'created': '/finance/archive'}
    >>> call(w, "create_folder", {"path": "/nowhere/archive"})
    Traceback (most recent call last):
    ...
    magic_envs.tool_execution.workspace_state.WorkspaceError: no such folder: /nowhere
"""

from __future__ import annotations

import functools
import importlib
import re
from dataclasses import dataclass
from datetime import date
from typing import Callable

from magic_envs.core.tools import Tool
from magic_envs.tool_execution.workspace_state import WorkspaceError, now, touch

BASE_APPS = ("files", "mail", "calendar", "contacts", "notes", "shop", "bank")
OOD_APPS = ("todo", "chat")  # never offered in train/test, not even as distractors
APP_MODULES = ("workspace_office", "workspace_agenda", "workspace_money", "workspace_team")
SERVICE = {"mail": "mail server", "shop": "shop", "bank": "bank", "chat": "chat server"}


@dataclass(frozen=True)
class Spec:
    tool: Tool
    fn: Callable
    app: str
    flaky: bool


_REGISTRY: dict[str, Spec] = {}


# JSON-schema parameters, by type.
def text(description: str, enum=None) -> dict:
    return {"type": "string", "description": description} | ({"enum": list(enum)} if enum else {})


def integer(description: str, minimum: int = 1) -> dict:
    return {"type": "integer", "minimum": minimum, "description": description}


def number(description: str) -> dict:
    return {"type": "number", "description": description}


def texts(description: str) -> dict:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def flag(description: str) -> dict:
    return {"type": "boolean", "description": description}


def tool(app: str, description: str, required: tuple = (), flaky: bool = False, **params: dict):
    """Register `fn` as a tool of `app` whose parameters are `params` (the `required` ones without default)."""
    def register(fn):
        schema = {"type": "object", "properties": params, "required": list(required), "additionalProperties": False}
        _REGISTRY[fn.__name__] = Spec(Tool(fn.__name__, description, schema), fn, app, flaky)
        return fn
    return register


@functools.cache
def registry() -> dict[str, Spec]:
    """Every tool by name (the app modules register themselves on import)."""
    for module in APP_MODULES:
        importlib.import_module(f"magic_envs.tool_execution.{module}")
    return dict(sorted(_REGISTRY.items()))


_TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "array": (list,)}


def fits_schema(parameters: dict, arguments: dict) -> bool:
    """A fast check of arguments against the schemas `tool` writes (typed properties, enums, minimums, lists of
    strings, required names, nothing else). True only when jsonschema would accept them too; on False the caller
    asks jsonschema, which words the problem (and accepts what this check is too strict for, such as 2.0 for
    an integer). jsonschema costs about a third of a step; this, a few microseconds."""
    props = parameters["properties"]
    for name, value in arguments.items():
        spec = props.get(name)
        if spec is None or type(value) not in _TYPES[spec["type"]]:
            return False
        if ("enum" in spec and value not in spec["enum"]) or ("minimum" in spec and value < spec["minimum"]):
            return False
        if spec["type"] == "array" and any(type(item) is not str for item in value):
            return False
    return all(name in arguments for name in parameters["required"])


def tools_of(apps) -> list[str]:
    return [name for name, spec in registry().items() if spec.app in apps]


def call(world: dict, name: str, arguments: dict):
    """Run one tool on `world` (arguments already fit its schema); raises WorkspaceError when refused."""
    spec = registry()[name]
    props = spec.tool.parameters["properties"]
    # jsonschema's "integer" takes 2.0 too; the tools count with ints
    arguments = {k: int(v) if type(v) is float and props[k]["type"] == "integer" else v for k, v in arguments.items()}
    return spec.fn(world, **arguments)


# ---- helpers the apps share ---------------------------------------------------------------------------------
def changed(world: dict, collection: str, key: str | None = None) -> str:
    """Note a change of a record and return the time it happened (the clock advances a minute per change)."""
    touch(world, collection, key)
    world["clock"] += 1
    return now(world)


def remove(world: dict, collection: str, key: str, what: str) -> dict:
    """Delete a record by id (what the delete tools of every app do)."""
    find(world, collection, key, what)
    del world[collection][key]
    changed(world, collection, key)
    return {"deleted": key}


def find(world: dict, collection: str, key: str, what: str) -> dict:
    record = world[collection].get(key)
    if record is None:
        raise WorkspaceError(f"no {what} with id {key!r}")
    return record


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME = re.compile(r"([01]\d|2[0-3]):[0-5]\d")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")


def check_date(value: str, what: str = "date") -> str:
    try:
        if not _DATE.fullmatch(value):
            raise ValueError
        date.fromisoformat(value)
    except ValueError:
        raise WorkspaceError(f"{what} must be a date written YYYY-MM-DD, got {value!r}") from None
    return value


def check_time(value: str, what: str = "time") -> int:
    """Minutes since midnight of an "HH:MM" time."""
    if not _TIME.fullmatch(value):
        raise WorkspaceError(f"{what} must be a 24-hour time written HH:MM, got {value!r}")
    return int(value[:2]) * 60 + int(value[3:])


def check_emails(addresses: list[str], what: str = "to", allow_empty: bool = False) -> list[str]:
    if not addresses and not allow_empty:
        raise WorkspaceError(f"'{what}' needs at least one e-mail address")
    bad = [a for a in addresses if not _EMAIL.fullmatch(a)]
    if bad:
        raise WorkspaceError(f"not an e-mail address: {bad[0]!r}")
    return as_set(a.lower() for a in addresses)


def as_set(values) -> list[str]:
    """Recipients, attendees and tags are sets: kept sorted and without repeats, however they were given."""
    return sorted(set(values))


def matches(query: str, *texts: str) -> bool:
    """Search semantics of every app: each word of the query occurs in one of the texts, case-insensitive."""
    words = query.lower().split()
    if not words:
        raise WorkspaceError("the search query is empty")
    haystack = "\n".join(texts).lower()
    return all(word in haystack for word in words)


def page_of(rows: list, page: int, size: int = 10) -> tuple[list, int]:
    """The rows of one page (1-based) and the number of pages; an error past the last page."""
    pages = max(1, -(-len(rows) // size))
    if page > pages:
        raise WorkspaceError(f"page {page} does not exist; there are {pages} page(s)")
    return rows[(page - 1) * size: page * size], pages


def needs_change(fields: dict) -> dict:
    """The fields an update call sets (those not left out); an error when it sets none."""
    given = {k: v for k, v in fields.items() if v is not None}
    if not given:
        raise WorkspaceError("nothing to update: give at least one field to change")
    return given
