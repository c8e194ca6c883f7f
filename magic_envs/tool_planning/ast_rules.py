"""BFCL's rules for one call against one gold call (bfcl-eval 2025.8.6.2's `simple_function_checker`).

A check returns None when the call passes, else a problem: a tuple (BFCL error type, message template,
values), formatted by `explain` only when someone reads it (parallel matching discards most problems).
`ast_check` documents the rules; comments here note where BFCL's behaviour is surprising but kept.
"""

from __future__ import annotations

from magic_envs.tool_planning.bfcl_java import decode_java
from magic_envs.tool_planning.bfcl_js import decode_js

PYTHON_TYPES = {"string": str, "integer": int, "float": float, "boolean": bool, "array": list, "tuple": list,
                "dict": dict, "any": str}
JAVA_TYPES = {"byte": int, "short": int, "integer": int, "float": float, "double": float, "long": int,
              "boolean": bool, "char": str, "Array": list, "ArrayList": list, "Set": set, "HashMap": dict,
              "Hashtable": dict, "Queue": list, "Stack": list, "String": str, "any": str}
JS_TYPES = {"String": str, "integer": int, "float": float, "Bigint": int, "Boolean": bool, "dict": dict,
            "array": list, "any": str}
TYPES = {"python": PYTHON_TYPES, "java": JAVA_TYPES, "javascript": JS_TYPES}
_PYTHON_OR_JSON = {**PYTHON_TYPES, "number": float, "object": dict}
_LISTS = {"java": frozenset(("Array", "ArrayList")), "javascript": frozenset(("array",))}  # typed items
_DROP = str.maketrans({**dict.fromkeys(" ,./-_*^"), "'": '"'})
_NO_PROPS: dict = {}


def normalise(text: str) -> str:
    """BFCL's string standardisation: drop ` ,./-_*^`, lower case, and read `'` as `"`."""
    return text.translate(_DROP).lower()


_GOLD_NORMALISED: dict[str, str] = {}


def _gold_normalised(text: str) -> str:
    """`normalise` for gold strings, which recur on every check of an entry: memoised by value."""
    out = _GOLD_NORMALISED.get(text)
    if out is None:
        if len(_GOLD_NORMALISED) > 200_000:
            _GOLD_NORMALISED.clear()
        out = _GOLD_NORMALISED[text] = text.translate(_DROP).lower()
    return out


def explain(problem: tuple) -> str:
    template, *values = problem[1:]
    return template.format(*map(preview, values))


def preview(value) -> str:
    """A short repr for messages (model output may be megabytes long or nested too deep to print)."""
    try:
        text = repr(value)
    except Exception:
        return f"<{type(value).__name__}>"
    return text if len(text) <= 120 else text[:117] + "..."


def check_call(fn: tuple[str, dict], gold: dict, name: str, args: dict, lang: str):
    """fn: (name, JSON-schema parameters); gold: {param: [acceptable values]}."""
    fname, params = fn
    if name != fname:
        return "simple_function_checker:wrong_func_name", "expected a call to {}, got {}", fname, name
    props = params.get("properties") or _NO_PROPS
    required = params.get("required")
    if required:
        for p in required:
            if p not in args:
                return "simple_function_checker:missing_required", "missing required parameter {}", p
    for p, value in args.items():
        prop, acceptable = props.get(p), gold.get(p)
        if prop is None or acceptable is None:
            return "simple_function_checker:unexpected_param", "unexpected parameter {}", p
        problem = check_value(p, value, prop, acceptable, lang)
        if problem is not None:
            return problem
    for p, acceptable in gold.items():
        if p not in args and "" not in acceptable:
            return "simple_function_checker:missing_optional", "parameter {} is missing and not optional", p
    return None


def check_value(p: str, value, prop: dict, acceptable: list, lang: str):
    if lang == "python":
        kind = prop.get("type")
    else:
        kind = prop.get("x-bfcl-type") or prop.get("type")
    if type(kind) is not str:
        kind = None
    if lang == "python" or kind not in TYPES[lang]:  # Java/JavaScript properties of other types: as Python
        expected, nested = _PYTHON_OR_JSON.get(kind), None
        if expected is float and type(value) is int:
            value = float(value)
        elif expected is list:
            nested = _PYTHON_OR_JSON.get(_items_type(prop))
    else:  # Java/JavaScript: source code in a string, read by the declared type
        if type(value) is not str:
            return (f"type_error:{'java' if lang == 'java' else 'js'}",
                    "parameter {} must be {} source code in a string, got {}", p, kind, value)
        table, items = TYPES[lang], None
        if kind in _LISTS[lang]:
            items = _items_type(prop)
            if items not in table:
                items = None
        value = (decode_java if lang == "java" else decode_js)(value, kind, items)
        expected, nested = table[kind], table.get(items)
    variable = False
    if expected is None:  # no known type: no type constraint, compared by the value's own type
        expected = type(value)
    else:
        first = acceptable[0] if type(acceptable) is list and acceptable else ""
        answer_type = type(first) if first != "" else _answer_type(acceptable)
        # BFCL's "variable" rule: a value of the gold's type passes whatever the declared type, and is then
        # compared exactly; a value of the declared type is also compared exactly when the gold's type differs.
        variable = answer_type is not None and answer_type is not expected
        if type(value) is expected:
            if nested is not None and not _items_ok(value, acceptable, nested):
                kind_error = "type_error:nested" if type(value) is answer_type else "type_error:simple"
                return kind_error, "items of parameter {} should be {}, got {}", p, nested.__name__, value
        elif answer_type is not None and type(value) is answer_type:
            variable = True
        else:
            return "type_error:simple", "parameter {} should be {}, got {}", p, kind, value
    if not variable:
        if expected is str:  # the common case first
            v = value.translate(_DROP).lower()
            for a in acceptable:
                if type(a) is str and (_GOLD_NORMALISED.get(a) or _gold_normalised(a)) == v:
                    return None
            return "value_error:string", "invalid value {} for {}; expected one of {}", value, p, acceptable
        if expected is dict:
            return _check_dict(p, value, acceptable)
        if expected is list:
            if nested is dict:
                return _check_dict_list(p, value, acceptable)
            if _normalised(value) in [_normalised(a, gold=True) for a in acceptable]:
                return None
            return "value_error:list/tuple", "invalid value {} for {}; expected one of {}", value, p, acceptable
    if value in acceptable:
        return None
    return "value_error:others", "invalid value {} for {}; expected one of {}", value, p, acceptable


def _answer_type(acceptable) -> type | None:
    """The type of the first acceptable value that is not "" (the optional marker)."""
    for a in acceptable:
        if a != "":
            return type(a)
    return None


def _items_type(prop: dict) -> str | None:
    items = prop.get("x-bfcl-items-type") or (prop.get("items") or _NO_PROPS).get("type")
    return items if type(items) is str else None


def _items_ok(value: list, acceptable: list, nested: type) -> bool:
    """One level of item types, against each acceptable list (an item of that list's own type passes too)."""
    for answer in acceptable:
        if type(answer) is not list:
            return True  # BFCL checks items against list answers only: any other answer lets them pass
        item_type = _answer_type(answer)
        if all(type(v) is nested or type(v) is item_type for v in value):
            return True
    return False


def _normalised(values, gold: bool = False) -> list:
    if type(values) not in (list, tuple, str):  # BFCL indexes answers: a string is its characters
        if type(values) is dict and not values:
            return []
        raise TypeError(f"an acceptable value {preview(values)} is neither a list nor a string")
    norm = _gold_normalised if gold else normalise
    return [norm(v) if type(v) is str else v for v in values]


def _check_dict(p: str, value: dict, acceptable: list):
    problem = "dict_checker:unclear", "no acceptable value for {}", p
    for answer in acceptable:
        if answer == "":
            continue
        if type(answer) is not dict:
            raise TypeError(f"an acceptable dict for {p!r} is a {type(answer).__name__}")
        problem = None
        for key, v in value.items():  # raises on a value that is not a dict, where BFCL does too
            if key not in answer:
                problem = "value_error:dict_key", "unexpected key {} in {}", key, p
                break
            if (normalise(v) if type(v) is str else v) not in _normalised(answer[key], gold=True):
                problem = "value_error:dict_value", "invalid value {} for key {} of {}", v, key, p
                break
        for key, options in answer.items():  # runs even after a value error, whose type it may replace
            if key not in value and "" not in options:
                problem = "value_error:dict_key", "missing key {} in {}", key, p
                break
        if problem is None:
            return None
    return problem


def _check_dict_list(p: str, value: list, acceptable: list):
    problem = "list_dict_checker:unclear", "no acceptable value for {}", p
    for answer in acceptable:
        if len(value) != len(answer):
            problem = "value_error:list_dict_count", "wrong number of dicts in {}", p
            continue
        for item, item_answer in zip(value, answer):
            problem = _check_dict(p, item, [item_answer])
            if problem is not None:
                break
        else:
            return None
    return problem
