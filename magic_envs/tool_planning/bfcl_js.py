"""BFCL's JavaScript value encoding: what its checker reads from a JavaScript argument string, and back.

As `bfcl_java`, for the JavaScript category ("[1, 2]", "{key: 'value'}", "42n"): `decode_js` equals bfcl-eval
2025.8.6.2's conversion on every input, in linear time where BFCL's two-dimensional array pattern backtracks
exponentially and its object pattern quadratically; `encode_js` writes a gold value the way it is read back.
"""

from __future__ import annotations

import re
from decimal import Decimal

from magic_envs.tool_planning.bfcl_java import number_or_text, skip_ws

_JS_INT, _JS_FLOAT, _JS_BIGINT = re.compile(r"-?\d+$"), re.compile(r"-?\d+(\.\d+)?$"), re.compile(r"-?\d+n$")
_JS_1D = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")
_JS_NEW_ARRAY = re.compile(r"new\s+Array\(\s*\[")
_BRACKETS = re.compile(r"\[(.*?)\]")
_JS_DICT = re.compile(r"\{(.*?)\}")


def decode_js(text: str, kind: str, items: str | None = None):
    """The value BFCL's checker reads from a JavaScript argument `text` of declared type `kind`."""
    if kind == "String":
        quoted = len(text) > 0 and text[0] == text[-1] and text[0] in "'\""
        return text[1:-1] if quoted else text
    if kind == "integer":
        return int(text) if _JS_INT.match(text) else text
    if kind == "float":
        return float(text) if _JS_FLOAT.match(text) else text
    if kind == "Bigint":
        return int(text[:-1]) if _JS_BIGINT.match(text) else text
    if kind == "Boolean":
        return text == "true" if text in ("true", "false") else text
    if kind == "dict":
        return _js_dict(text.strip())
    if kind == "array":
        return _js_array(text.strip(), items)
    if kind == "any":
        return text
    raise ValueError(f"BFCL cannot convert JavaScript values of type {kind!r}")


def js_literal(text: str):
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if len(text) > 0 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return number_or_text(text)


def _js_array(code: str, items: str | None):
    try:
        end = _js_2d_end(code)
        if end:
            rows = []
            for i, row in enumerate(_BRACKETS.findall(code[:end])):
                row = row.strip()
                if i == 0 and row.startswith("["):
                    row = row[1:]
                rows.append([js_literal(e) for e in row.split(",")])
            return rows
        m = _JS_1D.match(code)
        if not m:
            return code
        body = (m.group(1) if m.group(1) is not None else m.group(2) or "").strip()
        parts = [e.strip() for e in body.split(",")] if body else []
        if items:
            return [decode_js_nested(e, items) for e in parts]
        return [js_literal(e) for e in parts]
    except Exception:  # BFCL keeps the raw text when an element cannot be converted
        return code


def decode_js_nested(text: str, items: str):
    return decode_js(text, items, "String" if text.startswith(("'", '"')) else None)


def _js_2d_end(code: str) -> int:
    """The end of BFCL's two-dimensional array match at the start of `code` (0 when none).

    The pattern is `\\[\\s*\\[.*?\\]\\s*(,\\s*\\[.*?\\]\\s*)*\\]` or the same inside `new Array(...)`, whose
    backtracking is exponential. Scanning right to left, `ok[r]` says whether the rows that follow position r
    close the array and where (each `.*?` row ends at the first "]" on its line from which the rest matches).
    """
    if code.startswith("["):
        start, closer = skip_ws(code, 1), "]"
        if not code.startswith("[", start):
            return 0
    else:
        m = _JS_NEW_ARRAY.match(code)
        if not m:
            return 0
        start, closer = m.end() - 1, ")"
    n = len(code)
    nonblank = list(range(n + 1))
    for i in range(n - 1, -1, -1):
        if code[i].isspace():
            nonblank[i] = nonblank[i + 1]
    end = [0] * (n + 2)  # end of the whole match from a rows position; 0 = no match
    first_good = [n] * (n + 2)  # first "]" at or after i from which the rows after it match
    newline = [n] * (n + 2)
    for i in range(n - 1, start, -1):
        c = code[i]
        newline[i] = i if c == "\n" else newline[i + 1]
        if c == closer:
            end[i] = i + 1
        elif c == ",":
            s = nonblank[i + 1]
            if s < n and code[s] == "[":
                p = first_good[s + 1]
                if p < newline[s + 1]:
                    end[i] = end[nonblank[p + 1]]
        first_good[i] = i if c == "]" and end[nonblank[i + 1]] else first_good[i + 1]
    p = first_good[start + 1]
    return end[nonblank[p + 1]] if p < newline[start + 1] else 0


def _js_dict(code: str):
    if code == "{}":
        return {}
    m = _JS_DICT.match(code)
    if not m:
        return code
    out = {}
    for key, value in _js_pairs(m.group(1)):
        key, value = key.strip().strip("'\""), value.strip()
        if value.startswith("[") and value.endswith("]"):
            out[key] = _js_array(value, None)
        elif value.startswith("{") and value.endswith("}"):
            out[key] = _js_dict(value)
        else:
            out[key] = js_literal(value.strip("'\""))
    return out


def _js_pairs(s: str) -> list[tuple[str, str]]:
    """BFCL's `([^:]+):\\s*(.*?)(?:,\\s*(?=[^,]+:)|$)` findall on a line, in linear time.

    A key runs to the next ":"; its value ends at the first "," after which another `key:` follows (the
    blanks after the comma may give back one character when that is what lets the lookahead succeed).
    """
    n = len(s)
    next_colon, next_comma, nonblank = [n] * (n + 2), [n] * (n + 2), list(range(n + 2))
    for i in range(n - 1, -1, -1):
        next_colon[i] = i if s[i] == ":" else next_colon[i + 1]
        next_comma[i] = i if s[i] == "," else next_comma[i + 1]
        if s[i].isspace():
            nonblank[i] = nonblank[i + 1]
    stop = [0] * (n + 1)  # where the match ends when the value stops at the comma at i (0: it cannot)
    first_stop = [n] * (n + 2)
    for e in range(n - 1, -1, -1):
        if s[e] == ",":
            w = nonblank[e + 1]
            if next_colon[w + 1] < next_comma[w] if w < n else False:
                stop[e] = w
            elif w < n and s[w] == ":" and w >= e + 2:
                stop[e] = w - 1
        first_stop[e] = e if stop[e] else first_stop[e + 1]
    pairs, i = [], 0
    while i < n:
        while i < n and s[i] == ":":
            i += 1
        c = next_colon[i]
        if c >= n:
            return pairs
        v = nonblank[c + 1]
        e = first_stop[v] if v < n else n
        pairs.append((s[i:c], s[v:e]))
        if e >= n:
            return pairs
        i = stop[e]
    return pairs


def encode_js(value, kind: str, items: str | None = None) -> str:
    """JavaScript source for `value` that `decode_js(..., kind, items)` reads back."""
    if isinstance(value, str):
        quoted = kind == "String" and len(value) > 0 and value[0] == value[-1] and value[0] in "'\""
        return f'"{value}"' if quoted else value
    if isinstance(value, bool):
        return "true" if value else "false"
    if kind == "Bigint" and isinstance(value, int):
        return f"{value}n"
    if isinstance(value, float):
        return _plain_float(value)
    if kind == "array" and isinstance(value, list):
        return "[" + ", ".join(_js_element(v, items) for v in value) + "]"
    if kind == "dict" and isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_js_source(v)}" for k, v in value.items()) + "}"
    return str(value)


def _js_element(value, items: str | None) -> str:
    if isinstance(value, str) and items == "String":
        return f"'{value}'"
    return encode_js(value, items) if items else _js_source(value)


def _js_source(value) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, list):
        return "[" + ", ".join(_js_source(v) for v in value) + "]"
    return encode_js(value, "any")


def _plain_float(value: float) -> str:
    text = repr(value)
    return format(Decimal(text), "f") if "e" in text or "E" in text else text
