"""BFCL v3 multi-turn: its entries, function docs and executable backends, called without eval.

bfcl-eval ships the multi-turn entries (`data/BFCL_v3_multi_turn_*.json`), their gold call sequences
(`data/possible_answer/`), one function doc file per backend class (`data/multi_turn_func_doc/`) and the
backends themselves (`eval_checker/multi_turn_eval/func_source_code/`: a file system, a math library, a
messaging app, Twitter, a ticket desk, a trading bot, a travel agency and a car). BFCL writes each call as
Python source and `eval`s it; here a call is a function name and a dict of keyword arguments, dispatched with
`getattr` to the public methods of the entry's backend objects. What a call returns reaches the agent as
BFCL's executor renders it (strings as they are, dicts as JSON, errors as "Error during execution: ..."), so
the execution results the checker compares are the same text.
"""

from __future__ import annotations

import ast
import copy
import decimal
import functools
import importlib
import inspect
import json
import math
import sys
import threading
from pathlib import Path

from magic_envs.core.tools import Tool
from magic_envs.tool_planning import bfcl
from magic_envs.tool_planning.bfcl_schema import to_tool

CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
# mpmath is the one dependency of the backends (MathAPI); bfcl-eval's own pull every provider SDK.
INSTALL = 'pip install --no-deps "bfcl-eval==2025.8.6.2" mpmath'
# bfcl-eval's backend classes, the module that holds each, and its function doc file.
BACKENDS = {
    "GorillaFileSystem": ("gorilla_file_system", "gorilla_file_system.json"),
    "MathAPI": ("math_api", "math_api.json"),
    "MessageAPI": ("message_api", "message_api.json"),
    "TwitterAPI": ("posting_api", "posting_api.json"),
    "TicketAPI": ("ticket_api", "ticket_api.json"),
    "TradingBot": ("trading_bot", "trading_bot.json"),
    "TravelAPI": ("travel_booking", "travel_booking.json"),
    "VehicleControlAPI": ("vehicle_control", "vehicle_control.json"),
}
STATELESS = frozenset({"MathAPI"})  # built without a scenario, as BFCL builds it
ERROR = "Error during execution: "  # how BFCL's executor reports an exception raised by a call
# Resource limits on the few calls whose cost grows without bound in their arguments (an agent asking for a
# logarithm to a billion digits, or 10 ** 10 ** 9): refused with an error instead of stalling the process.
# Every gold call is far below them.
MAX_DIGITS = 10_000
MAX_RESULT_BITS = 1 << 20
_MATH = threading.Lock()


def data_dir() -> Path:
    """bfcl-eval's data folder; a clear ImportError naming the pip command when the package is missing."""
    try:
        return bfcl.data_dir()
    except ImportError:
        raise _missing() from None


def _missing() -> ImportError:
    return ImportError("magic/BFCLMultiTurn-v0 plays the BFCL v3 multi-turn entries on the backends shipped with "
                       f"bfcl-eval; install them with: {INSTALL}")


def _json_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@functools.cache
def entries(category: str) -> tuple[dict, ...]:
    """The entries of one multi-turn category, each with its `ground_truth` (one call list per turn)."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown BFCL multi-turn category {category!r}; choose from {CATEGORIES}")
    folder = data_dir()
    gold = {r["id"]: r["ground_truth"] for r in _json_lines(folder / "possible_answer" / f"BFCL_v3_{category}.json")}
    return tuple({**row, "ground_truth": gold[row["id"]]} for row in _json_lines(folder / f"BFCL_v3_{category}.json"))


def category_of(entry_id: str) -> str:
    """"multi_turn_miss_func_12" -> "multi_turn_miss_func"."""
    return entry_id.rsplit("_", 1)[0]


def find_entry(entry_id: str) -> dict:
    category = category_of(entry_id)
    for entry in entries(category) if category in CATEGORIES else ():
        if entry["id"] == entry_id:
            return entry
    raise ValueError(f"no BFCL v3 multi-turn entry has id {entry_id!r}")


@functools.cache
def function_docs(class_name: str) -> tuple[dict, ...]:
    """The function docs BFCL offers for one backend class, in its file's order."""
    return tuple(_json_lines(data_dir() / "multi_turn_func_doc" / BACKENDS[class_name][1]))


@functools.cache
def tools(class_name: str) -> tuple[Tool, ...]:
    """The functions of one backend class as the OpenAI tool schemas a function-calling model sees."""
    return tuple(Tool.from_schema(to_tool(doc)) for doc in function_docs(class_name))


@functools.cache
def backend_class(class_name: str) -> type:
    if class_name not in BACKENDS:
        raise ValueError(f"unknown BFCL backend class {class_name!r}; choose from {sorted(BACKENDS)}")
    data_dir()  # the clear message first, when bfcl-eval is missing
    try:
        module = importlib.import_module(
            f"bfcl_eval.eval_checker.multi_turn_eval.func_source_code.{BACKENDS[class_name][0]}")
    except ImportError:  # bfcl-eval without mpmath
        raise _missing() from None
    return getattr(module, class_name)


@functools.cache
def public_methods(class_name: str) -> tuple[str, ...]:
    """The methods BFCL's executor exposes: every public one (they are exactly the documented functions)."""
    cls = backend_class(class_name)
    return tuple(n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_"))


@functools.cache
def parameters(class_name: str, method: str) -> tuple[str, ...]:
    return tuple(p for p in inspect.signature(getattr(backend_class(class_name), method)).parameters if p != "self")


def parse_gold_call(text: str, classes) -> tuple[str, dict]:
    """A gold call written as Python source ("mv(source='a', destination='b')", "sort('report.pdf')") as a
    function name and keyword arguments; positional arguments get their parameter names. ValueError if the
    text is not one call of a public method of `classes` with literal arguments."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise ValueError("not a function call")
        name = node.func.id
        owner = next((c for c in classes if name in public_methods(c)), None)
        if owner is None:
            raise ValueError(f"{name!r} is not a function of {list(classes)}")
        params = parameters(owner, name)
        if len(node.args) > len(params):
            raise ValueError("too many positional arguments")
        arguments = {p: ast.literal_eval(a) for p, a in zip(params, node.args)}
        arguments.update({k.arg: ast.literal_eval(k.value) for k in node.keywords})
        if json.loads(json.dumps(arguments)) != arguments:  # a tuple, a set: no agent could write it
            raise ValueError("arguments must be JSON values")
    except (SyntaxError, ValueError, TypeError, RecursionError) as e:
        raise ValueError(f"gold call {text!r} cannot be read: {e}") from None
    return name, arguments


def render(result) -> str:
    """A call's return value as BFCL's executor renders it for the model and the checker."""
    if type(result) is str:
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except Exception:  # noqa: BLE001 - values json cannot write (Decimal, mpf) fall back to str, as in BFCL
            return str(result)
    return str(result)


class Backends:
    """The live backend objects of one entry, built from its `initial_config` as BFCL builds them."""

    def __init__(self, classes, initial_config: dict, long_context: bool):
        self.instances = {}
        for name in classes:
            instance = backend_class(name)()
            if name not in STATELESS:
                # A private copy: the backends mutate what they load, and the task dict must stay as given.
                instance._load_scenario(copy.deepcopy(initial_config.get(name, {})), long_context=long_context)
            self.instances[name] = instance
        self.owner = {m: name for name in classes for m in public_methods(name)}

    def call(self, name: str, arguments: dict) -> str:
        """Run one call and return its result text; errors are results too, as in BFCL."""
        owner = self.owner.get(name)
        if owner is None:
            return f"{ERROR}name '{name[:200]}' is not defined"
        method = getattr(self.instances[owner], name)
        if owner != "MathAPI":
            return _run(method, arguments)
        refused = _too_costly(name, arguments)
        if refused:
            return ERROR + refused
        # MathAPI sets mpmath's precision process-wide (and decimal's per thread) before it computes: one such
        # call at a time, and both put back afterwards, so no other env or thread ever sees them.
        with _MATH:
            mpmath = sys.modules["mpmath"]  # imported by MathAPI's module
            precision, digits = mpmath.mp.dps, decimal.getcontext().prec
            try:
                return _run(method, arguments)
            finally:
                mpmath.mp.dps, decimal.getcontext().prec = precision, digits

    def differences(self, gold: Backends) -> list[str]:
        """The public attributes (BFCL's instance state) in which these objects differ from `gold`'s, as
        "Class.attribute"; [] when every involved object matches."""
        found = []
        for name, expected in gold.instances.items():
            actual = self.instances.get(name)
            for attr, value in vars(expected).items():
                if attr.startswith("_"):
                    continue
                try:
                    differs = not hasattr(actual, attr) or getattr(actual, attr) != value  # BFCL compares with !=
                except Exception:  # noqa: BLE001 - a comparison that fails (a cyclic folder tree) is a mismatch
                    differs = True
                if differs:
                    found.append(f"{name}.{attr}")
        return found

    def state(self) -> dict:
        """The public attributes of every object (what the checker compares), for inspection."""
        return {name: {k: v for k, v in vars(obj).items() if not k.startswith("_")}
                for name, obj in self.instances.items()}


def _run(method, arguments: dict) -> str:
    try:
        # A private copy: backends keep argument objects in their state (a tweet's `mentions` list, later
        # extended), and the caller's values (a cached gold call) must stay as given.
        return render(method(**copy.deepcopy(arguments)))
    except Exception as e:  # noqa: BLE001 - any failure of a call is its result, as BFCL's executor reports it
        return f"{ERROR}{e}"


def _too_costly(name: str, arguments: dict) -> str:
    """Why a MathAPI call would run without bound, or ''."""
    for key in ("precision", "decimal_places"):
        value = arguments.get(key)
        if isinstance(value, int) and abs(value) > MAX_DIGITS:
            return f"{key} must lie within ±{MAX_DIGITS}"
    if name == "power":
        base, exponent = arguments.get("base"), arguments.get("exponent")
        if isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1 \
                and exponent * math.log2(abs(base)) > MAX_RESULT_BITS:
            return "the result would be too large to compute"
    if name == "multiply":
        sizes = [len(v) for v in arguments.values() if isinstance(v, (str, list))]
        counts = [v for v in arguments.values() if isinstance(v, int)]
        if sizes and counts and max(sizes) * max(counts) > MAX_RESULT_BITS:
            return "the result would be too large to compute"
    return ""
