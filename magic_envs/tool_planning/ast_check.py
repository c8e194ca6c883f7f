"""BFCL's AST verification of tool calls, re-implemented, and MagicEval-Tool's name and argument accuracy.

    >>> from magic_envs.tool_planning.ast_check import check_calls
    >>> tool = {"name": "area", "parameters": {"type": "object", "required": ["base"],
    ...         "properties": {"base": {"type": "number"}, "unit": {"type": "string"}}}}
    >>> gold = [{"area": {"base": [10.0], "unit": ["cm", ""]}}]
    >>> check_calls([("area", {"base": 10, "unit": "CM"})], gold, [tool]).valid
    True
    >>> check_calls([("area", {"base": 10, "unit": "m"})], gold, [tool]).error_type
    'value_error:string'

The rules are bfcl-eval 2025.8.6.2's `ast_checker` (its verdicts on BFCL v3 agree with this module's on every
entry and thousands of perturbations, see tests/test_bfcl.py):

* Categories. "irrelevance" (any name containing it): valid iff there is no call. "parallel" (names containing
  it): as many calls as gold calls, matched order-free and greedily, as BFCL does: each gold call in order takes
  the first still unmatched call that passes it (so a call that could pass two gold calls may block a valid
  permutation). "multiple": one call, checked against the gold's function. Otherwise ("simple", Java,
  JavaScript): one call, checked against the first offered function with the first gold call's values.
* One call passes one gold call when: its name is the function's; every required parameter is present; every
  parameter it passes is both in the schema and in the gold; each value has the declared type (an int counts as
  a float; arrays also check their items' type one level deep, exactly, against each acceptable answer; a value
  of the gold answer's own type passes too, BFCL's "variable" rule, and is then compared exactly); each value is
  one of the gold's acceptable values; and every gold parameter that is absent lists "" among its acceptable
  values (it is optional). Strings (also inside lists, and dict values) compare after `normalise`: lower case,
  with the characters ` ,./-_*^` removed and `'` read as `"`. Dicts compare key by key against each acceptable
  dict; their values are not normalised further down.
* Java and JavaScript: every argument must be a string of source code, converted by the declared type with
  `bfcl_java.decode_java` / `bfcl_js.decode_js` before the checks above (BFCL's own conversion, in linear time).

`functions` are OpenAI tool schemas (`{"type": "function", "function": {...}}`), bare function dicts, BFCL
function docs or `Tool`s. A Python property's "type" may be a JSON-schema type (number -> float, object -> dict)
or a BFCL one (float, dict, tuple, any); Java and JavaScript properties take their type from "x-bfcl-type" (and
"x-bfcl-items-type"), the annotations `bfcl_schema` writes where it shows them to the model as strings, else
from "type" when that names a type of the language (a BFCL doc as it comes).

Where BFCL raises instead of answering (a property without a type, a schema without "required", a list type
without item type, a value its conversion cannot take, an int of more than 4300 digits, a malformed gold), these
functions answer: no type constraint, nothing required, no item check, and otherwise a failing verdict
("checker:error"). Those are the only differences; none occurs on BFCL v3's entries.
No input makes these functions raise: malformed calls, golds or functions give a failing verdict.
"""

from __future__ import annotations

from magic_envs.tool_planning.ast_rules import check_call, explain, normalise, preview
from magic_envs.tool_planning.ast_rules import check_value as _check_value

__all__ = ["Verdict", "check_calls", "check_value", "normalise", "tool_accuracy"]
_LANGUAGES = {"python": "python", "java": "java", "javascript": "javascript", "js": "javascript",
              "Python": "python", "Java": "java", "JavaScript": "javascript"}
_SIMPLE, _MULTIPLE, _PARALLEL = "simple_function_checker", "multiple_function_checker", \
    "parallel_function_checker_no_order"


class Verdict:
    """BFCL's answer for one model output: valid, and otherwise why (`error_type` uses BFCL's names)."""

    __slots__ = ("_error", "error_type", "valid")

    def __init__(self, valid: bool, error="", error_type: str = ""):
        self.valid, self.error_type, self._error = valid is True or bool(valid), error_type, error

    @property
    def error(self) -> str:
        """Why the output failed, worded on first access: most verdicts are only counted."""
        if type(self._error) is tuple:
            self._error = explain(self._error)
        elif callable(self._error):
            self._error = self._error()
        return self._error

    def __eq__(self, other) -> bool:
        return isinstance(other, Verdict) and (self.valid, self.error, self.error_type) == \
            (other.valid, other.error, other.error_type)

    def __hash__(self) -> int:
        return hash((self.valid, self.error_type))

    def __repr__(self) -> str:
        return f"Verdict(valid={self.valid}, error={self.error!r}, error_type={self.error_type!r})"


VALID = Verdict(True)
_IRRELEVANCE = "irrelevance"
_CHECKERS: dict[str, str] = {}


def _checker_for(category: str) -> str:
    """Which BFCL checker a category uses, by the words in its name as BFCL decides (memoised)."""
    checker = _CHECKERS.get(category)
    if checker is None:
        checker = (_IRRELEVANCE if "irrelevance" in category else _PARALLEL if "parallel" in category else
                   _MULTIPLE if "multiple" in category else _SIMPLE)
        if len(_CHECKERS) < 1000:
            _CHECKERS[category] = checker
    return checker


def check_calls(calls, gold, functions, category: str = "simple", language: str = "python") -> Verdict:
    """BFCL's verdict on `calls` for a BFCL `gold` answer (`[{function: {param: [acceptable values]}}]`) and
    the offered `functions`. `calls`: ToolCalls, (name, arguments) pairs or {"name", "arguments"} dicts."""
    try:
        lang = _LANGUAGES.get(language) or _LANGUAGES[language.lower()]
        checker = _CHECKERS.get(category) or _checker_for(category)
        if type(calls) is not list and type(calls) is not tuple:
            raise _Unscorable(f"expected a list of calls, got {type(calls).__name__}")
        if checker is _IRRELEVANCE:
            return VALID if not calls else Verdict(False, ("", "expected no function call, got {}", len(calls)),
                                                   "irrelevance_error:decoder_success")
        wanted = 1 if checker is _SIMPLE else len(gold)
        if len(calls) != wanted:
            return Verdict(False, ("", "expected {} function call(s), got {}", wanted, len(calls)),
                           checker + ":wrong_count")
        if checker is _PARALLEL:
            return _match_in_any_order(_as_calls(calls), _expected(gold, functions, category), lang)
        call = calls[0]
        if type(call) is tuple and len(call) == 2 and type(call[0]) is str and type(call[1]) is dict:
            name, args = call
        else:
            name, args = _as_call(call)
        for gold_name, gold_args in gold[0].items():  # BFCL reads a gold call's first (only) entry
            break
        # Simple categories check the first offered function, whatever name the gold gives (a few BFCL
        # entries name another), as BFCL does.
        fn = _function(functions[0]) if checker is _SIMPLE else _find(functions, gold_name)
        problem = check_call(fn, gold_args, name, args, lang)
        return VALID if problem is None else Verdict(False, problem, problem[0])
    except _Unscorable as e:
        return Verdict(False, str(e), "ast_decoder:decoder_wrong_output_format")
    except Exception as e:  # where BFCL raises: a malformed gold or function, a value it cannot convert
        return Verdict(False, f"unscorable output ({type(e).__name__}: {preview(str(e))})", "checker:error")


def check_value(value, prop: dict, acceptable: list, language: str = "python") -> Verdict:
    """BFCL's per-parameter check: does `value` pass for a parameter with JSON schema `prop` and the gold's
    `acceptable` values (type, conversion for Java/JavaScript, normalisation, membership)?"""
    try:
        problem = _check_value("value", value, prop, acceptable, _LANGUAGES.get(language) or language.lower())
        return VALID if problem is None else Verdict(False, problem, problem[0])
    except Exception as e:
        return Verdict(False, f"unscorable value ({type(e).__name__})", "checker:error")


def tool_accuracy(calls, gold, functions, category: str = "simple", language: str = "python") -> tuple[float, float]:
    """MagicEval-Tool's (name accuracy, argument accuracy) of `calls` against the gold calls.

    Name accuracy: the size of the largest one-to-one matching of predicted to gold calls with equal function
    names, over max(#gold, #predicted). Argument accuracy: the size of the largest one-to-one matching in which
    each predicted call passes its gold call's per-call check (name, required, unexpected, types, values,
    missing optional), over the same denominator. Both are 1.0 when neither side has a call (irrelevance
    answered with no call) and 0.0 for output that cannot be scored.
    """
    try:
        calls, lang = _as_calls(calls), _LANGUAGES.get(language) or _LANGUAGES[language.lower()]
        expected = [] if "irrelevance" in category else _expected(gold, functions, category)
        total = max(len(calls), len(expected))
        if total == 0:
            return 1.0, 1.0
        left: dict[str, int] = {}
        for name, _ in calls:
            left[name] = left.get(name, 0) + 1
        named = 0
        for (name, _), _ in expected:
            if left.get(name, 0) > 0:
                left[name] -= 1
                named += 1
        # A gold call with as many passing candidates as there are gold calls can always be matched, so
        # scanning stops there: thousands of identical calls cost one pass each.
        edges = []
        for fn, args in expected:
            passing = []
            for j, (name, arguments) in enumerate(calls):
                if name == fn[0] and check_call(fn, args, name, arguments, lang) is None:
                    passing.append(j)
                    if len(passing) >= len(expected):
                        break
            edges.append(passing)
        return named / total, _max_matching(edges) / total
    except Exception:
        return 0.0, 0.0


# ---- structure ----------------------------------------------------------------------------------------------
_NO_PARAMS: dict = {}


class _Unscorable(ValueError):
    pass


def _as_calls(calls) -> list[tuple[str, dict]]:
    if not isinstance(calls, (list, tuple)):
        raise _Unscorable(f"expected a list of calls, got {type(calls).__name__}")
    return [_as_call(call) for call in calls]


def _as_call(call) -> tuple[str, dict]:
    if type(call) is tuple and len(call) == 2 and type(call[0]) is str and type(call[1]) is dict:
        return call
    if hasattr(call, "arguments"):
        name, args = call.name, call.arguments
    elif isinstance(call, dict):
        name, args = call.get("name"), call.get("arguments")
    elif isinstance(call, (list, tuple)) and len(call) == 2:
        name, args = call
    else:
        name = args = None
    if type(name) is not str or not isinstance(args, dict):
        raise _Unscorable("each call needs a string name and a dict of arguments")
    return name, args


def _function(f) -> tuple[str, dict]:
    """(name, parameters) of an OpenAI tool schema, a bare function dict, a BFCL doc or a Tool."""
    if type(f) is not dict:
        return f.name, f.parameters
    inner = f.get("function")
    if type(inner) is dict:
        f = inner
    return f["name"], f.get("parameters") or _NO_PARAMS


def _find(functions, name: str) -> tuple[str, dict]:
    for f in functions:
        if type(f) is dict:
            inner = f.get("function")
            if type(inner) is dict:
                f = inner
            if f.get("name") == name:
                return name, f.get("parameters") or _NO_PARAMS
        elif f.name == name:
            return name, f.parameters
    raise LookupError(f"the gold calls {name!r}, which is not among the functions")


def _expected(gold, functions, category: str) -> list[tuple[tuple[str, dict], dict]]:
    """(function, gold arguments) per gold call, as `check_calls` pairs them."""
    if "parallel" not in category and "multiple" not in category:
        return [(_function(functions[0]), next(iter(gold[0].values())))]
    out = []
    for call in gold:
        for name, args in call.items():  # BFCL reads a gold call's first (only) entry
            out.append((_find(functions, name), args))
            break
        else:
            raise ValueError("a gold call names no function")
    return out


def _match_in_any_order(calls, expected, lang: str) -> Verdict:
    """BFCL's greedy order-free matching: each gold call in turn takes the first unmatched call passing it."""
    used = [False] * len(calls)
    for i, (fn, args) in enumerate(expected):
        problem = None
        for j, (name, arguments) in enumerate(calls):
            if used[j]:
                continue
            if name != fn[0]:  # the first rule of `check_call`, without the call
                problem = "simple_function_checker:wrong_func_name", "expected a call to {}, got {}", fn[0], name
                continue
            problem = check_call(fn, args, name, arguments, lang)
            if problem is None:
                used[j] = True
                break
        if problem is not None:
            return Verdict(False, lambda i=i, fn=fn, problem=problem: f"no call matches gold call {i} ({fn[0]}); "
                           f"the last mismatch: {explain(problem)}", f"{_PARALLEL}:cannot_find_match")
    return VALID


def _max_matching(edges: list[list[int]]) -> int:
    """Size of a maximum bipartite matching (Kuhn's augmenting paths); edges[i]: calls gold call i accepts."""
    owner: dict[int, int] = {}

    def augment(i: int, seen: set) -> bool:
        for j in edges[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in range(len(edges)))
