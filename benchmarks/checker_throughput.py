"""Our BFCL AST checker against bfcl-eval's own `ast_checker`: identical verdicts, and how much faster.

    python benchmarks/checker_throughput.py [--repeat 3] [--categories simple java ...]

Inputs: every entry of every BFCL v3 AST category, answered by its first acceptable answer (the env's oracle)
and by systematic perturbations of it (`perturbations`): a wrong value, a wrong type, a value of another
number type, an equivalent string spelling, null, a missing parameter, an extra parameter, an optional
parameter given, a wrong or another offered function name, a dropped, duplicated or reordered call, no call.
Both checkers see the same inputs: bfcl-eval the entry's function docs and decoded calls, ours the converted
OpenAI tool schemas (original names) and the same calls. Prints outputs/s and calls/s of each, the ratio, and
the verdict agreement (valid and error type); where bfcl-eval raises (an integer of more than 4300 digits), its
verdict counts as invalid and ours must be the failing "checker:error".
Needs bfcl-eval (pip install --no-deps "bfcl-eval==2025.8.6.2"); nothing else of it is imported.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import os
import sys
import time
import types
from dataclasses import dataclass

LANGUAGE_NAMES = {"python": "Python", "java": "Java", "javascript": "JavaScript"}


def load_reference():
    """bfcl-eval's `ast_checker`, or None without bfcl-eval.

    Its module imports `bfcl_eval.constants.model_config`, which imports every provider SDK (anthropic,
    openai, cohere, mistralai, google-genai, boto3, qwen-agent, ...) only to read one flag of the model being
    scored: `underscore_to_dot`, whether "." in function names was replaced by "_". When that import fails,
    a stand-in module answers False for every model, which is the flag of a model that keeps the dots: the
    calls here use the original dotted names.
    """
    if importlib.util.find_spec("bfcl_eval") is None:
        return None
    try:
        from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
        return ast_checker
    except ImportError:
        pass
    stand_in = types.ModuleType("bfcl_eval.constants.model_config")
    stand_in.MODEL_CONFIG_MAPPING = _Models()
    sys.modules[stand_in.__name__] = stand_in
    try:
        from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    finally:  # the checker keeps its reference; nothing else should see the stand-in
        del sys.modules[stand_in.__name__]
    return ast_checker


@dataclass(frozen=True)
class _KeepDots:
    underscore_to_dot: bool = False


class _Models(dict):
    def __missing__(self, model_name):
        return _KeepDots()


def reference_verdict(ast_checker, entry: dict, calls, category: str, language: str) -> tuple[bool, str]:
    """bfcl-eval's (valid, error type); `calls` as (name, arguments) pairs or already in its format."""
    output = [{c[0]: c[1]} for c in calls] if calls and type(calls[0]) is tuple else calls
    try:
        result = ast_checker(entry["function"], output, entry["ground_truth"], LANGUAGE_NAMES[language],
                             category, "magic")
    except Exception as e:  # bfcl-eval raises on some malformed outputs; they count as wrong answers
        return False, f"raised {type(e).__name__}"
    return bool(result["valid"]), result.get("error_type", "")


# ---- perturbations -----------------------------------------------------------------------------------------
def _wrong(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 7919
    if isinstance(value, float):
        return value + 1000.5
    if isinstance(value, str):
        return value + "zq"
    if isinstance(value, list):
        return value[:-1] if len(value) > 1 else value + ["zq"]
    if isinstance(value, dict):
        return {**value, "zq": 1}
    return "zq"


def _other_type(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return 12345
    if isinstance(value, list):
        return {"items": value}
    if isinstance(value, dict):
        return [value]
    return 0


def _respelled(value):
    """A spelling BFCL's normalisation treats as equal (or, for numbers, the other number type)."""
    if isinstance(value, str):
        return f" {value.upper()}-"
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float):
        return int(value) if value == int(value) else value
    if isinstance(value, list):
        return [_respelled(v) for v in value]
    if isinstance(value, dict):
        return {k: _respelled(v) for k, v in value.items()}
    return value


def perturbations(calls: list[tuple[str, dict]], tool_names: list[str]):
    """(label, calls) variants of a gold answer, each a fresh copy."""
    calls = copy.deepcopy(calls)
    yield "answer", copy.deepcopy(calls)
    def edit(i, new_args=None, new_name=None):
        out = copy.deepcopy(calls)
        out[i] = (new_name or calls[i][0], calls[i][1] if new_args is None else new_args)
        return out

    for i, (name, args) in enumerate(calls):
        for param, value in args.items():
            rest = {k: v for k, v in args.items() if k != param}
            yield "wrong_value", edit(i, {**args, param: _wrong(value)})
            yield "wrong_type", edit(i, {**args, param: _other_type(value)})
            yield "respelled", edit(i, {**args, param: _respelled(value)})
            yield "null", edit(i, {**args, param: None})
            yield "missing_param", edit(i, rest)
            if isinstance(value, list) and len(value) > 1:
                yield "reordered_list", edit(i, {**args, param: value[::-1]})
            if isinstance(value, dict) and value:
                key = next(iter(value))
                yield "dict_key_missing", edit(i, {**args, param: {k: v for k, v in value.items() if k != key}})
                yield "dict_value_wrong", edit(i, {**args, param: {**value, key: _wrong(value[key])}})
        yield "extra_param", edit(i, {**args, "zq_extra": 1})
        yield "wrong_function", edit(i, new_name=name + "_x")
        for other in tool_names:
            if other != name:
                yield "other_function", edit(i, new_name=other)
                break
    if calls:
        yield "no_call", []
        yield "dropped_call", calls[:-1]
        yield "duplicated_call", calls + calls[:1]
    if len(calls) > 1:
        yield "reordered_calls", calls[::-1]


def optional_additions(entry: dict, calls, tools: list[dict]):
    """Each schema parameter the answer leaves out, given with its gold's other values or a made-up one."""
    gold = {name: args for g in entry["ground_truth"] for name, args in g.items()}
    for i, (name, args) in enumerate(calls):
        fn = next((t["function"] for t in tools if t["function"]["name"] == name), None)
        if fn is None:
            continue
        for param in (fn["parameters"].get("properties") or {}):
            if param in args:
                continue
            values = [v for v in gold.get(name, {}).get(param, []) if v != ""] or ["zq"]
            out = copy.deepcopy(calls)
            out[i] = (name, {**args, param: values[0]})
            yield "optional_given", out


def typed_perturbations(entry: dict, category: str, tools: list[dict]):
    """Java/JavaScript: wrong and respelled values written as source code again, so the conversion succeeds
    and the comparison decides (plain perturbations of the source text mostly break the conversion)."""
    from magic_envs.tool_planning.bfcl import oracle_calls
    from magic_envs.tool_planning.bfcl_java import encode_java
    from magic_envs.tool_planning.bfcl_js import encode_js
    from magic_envs.tool_planning.bfcl_schema import language_of

    language = language_of(category)
    if language == "python":
        return
    encode = encode_java if language == "java" else encode_js
    written, raw = oracle_calls(entry, category), oracle_calls(entry, category, written=False)
    for i, ((name, args), (_, values)) in enumerate(zip(written, raw)):
        props = next(t["function"] for t in tools if t["function"]["name"] == name)["parameters"]["properties"]
        for param, value in values.items():
            prop = props.get(param, {})
            kind, items = prop.get("x-bfcl-type"), prop.get("x-bfcl-items-type")
            variants = [("typed_wrong_value", _wrong(value)), ("typed_respelled", _respelled(value)),
                        ("typed_other_type", _other_type(value))]
            if kind in ("integer", "long") and isinstance(value, int):  # bfcl-eval's int() raises on these
                variants.append(("typed_huge_number", "9" * 4400 + ("L" if kind == "long" else "")))
            for label, new in variants:
                try:
                    text = new if label == "typed_huge_number" else encode(new, kind, items)
                except Exception:  # a value the encoder has no spelling for
                    continue
                out = copy.deepcopy(written)
                out[i] = (name, {**args, param: text})
                yield label, out


def cases(categories=None):
    """Every (entry, category, language, tools, label, calls) the comparison runs."""
    from magic_envs.tool_planning.bfcl import AST_CATEGORIES, entries, oracle_calls
    from magic_envs.tool_planning.bfcl_schema import language_of, to_tool

    for category in categories or AST_CATEGORIES:
        language = language_of(category)
        for entry in entries(category):
            tools = [to_tool(f, language, rename=False) for f in entry["function"]]
            answer = oracle_calls(entry, category)
            names = [t["function"]["name"] for t in tools]
            for label, calls in perturbations(answer, names):
                yield entry, category, language, tools, label, calls
            for label, calls in optional_additions(entry, answer, tools):
                yield entry, category, language, tools, label, calls
            for label, calls in typed_perturbations(entry, category, tools):
                yield entry, category, language, tools, label, calls


def main() -> int:
    from magic_envs.tool_planning.ast_check import check_calls

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="timed passes over all inputs (best is kept)")
    parser.add_argument("--categories", nargs="*", default=None)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core for both
    ast_checker = load_reference()
    if ast_checker is None:
        print('bfcl-eval is not installed: pip install --no-deps "bfcl-eval==2025.8.6.2"')
        return 2
    inputs = list(cases(args.categories))
    n_calls = sum(len(c[5]) for c in inputs)
    theirs = [reference_verdict(ast_checker, e, calls, cat, lang) for e, cat, lang, _, _, calls in inputs]
    ours = [check_calls(calls, e["ground_truth"], tools, cat, lang) for e, cat, lang, tools, _, calls in inputs]
    same_valid = sum(t[0] == o.valid for t, o in zip(theirs, ours))
    same_type = sum(t[0] == o.valid and (t[0] or t[1] == o.error_type or
                                         (t[1].startswith("raised") and o.error_type == "checker:error"))
                    for t, o in zip(theirs, ours))
    raised = sum(t[1].startswith("raised") for t in theirs)
    theirs_format = [[{name: args} for name, args in c[5]] for c in inputs]
    timing = {"bfcl-eval": float("inf"), "ours": float("inf")}
    for _ in range(args.repeat):  # interleaved, best of each: load changes hit both alike
        start = time.perf_counter()
        for (e, cat, lang, _, _, _), output in zip(inputs, theirs_format):
            reference_verdict(ast_checker, e, output, cat, lang)  # its own input format, converted beforehand
        timing["bfcl-eval"] = min(timing["bfcl-eval"], time.perf_counter() - start)
        start = time.perf_counter()
        for e, cat, lang, tools, _, calls in inputs:
            check_calls(calls, e["ground_truth"], tools, cat, lang)
        timing["ours"] = min(timing["ours"], time.perf_counter() - start)
    print(f"inputs: {len(inputs)} model outputs, {n_calls} calls, {sum(t[0] for t in theirs)} valid by bfcl-eval, "
          f"{raised} on which bfcl-eval raises")
    for who, seconds in timing.items():
        print(f"{who:<10} {len(inputs) / seconds:>12,.0f} outputs/s {n_calls / seconds:>12,.0f} calls/s")
    print(f"speed-up: {timing['bfcl-eval'] / timing['ours']:.2f}x")
    print(f"verdict agreement: {same_valid}/{len(inputs)} valid; {same_type}/{len(inputs)} valid and error type")
    for (t, o), (e, cat, lang, _, label, calls) in zip(zip(theirs, ours), inputs):
        if t[0] != o.valid:
            print(f"  DISAGREE {e['id']} {label}: bfcl-eval {t}, ours {o}")
    return 0 if same_valid == len(inputs) else 1


if __name__ == "__main__":
    sys.exit(main())
