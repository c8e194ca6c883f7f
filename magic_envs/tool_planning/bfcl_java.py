"""BFCL's Java value encoding: what its checker reads from a Java argument string, and back.

In BFCL's Java category every argument is a string of Java source ("42L", "new ArrayList<>(Arrays.asList(1,
2))", "new HashMap<String, Object>() {{ put(\"k\", 1); }}"), which its checker converts by the parameter's
declared type before comparing with the gold. `decode_java` gives the same value as bfcl-eval 2025.8.6.2 for
every input: the same patterns, the same first match, the same fallback to the raw string (tests/test_bfcl.py
compares them on random inputs). BFCL finds those matches with backtracking regular expressions, some of them
exponential (`new HashMap<>(){` and 250 spaces takes longer than a minute); here each is found by a scan in
linear time, so no argument can stall scoring. `encode_java` writes a gold value the way it is read back.
"""

from __future__ import annotations

import re


class Next:
    """The next occurrence of `sub` at or after a position, for non-decreasing queries: linear overall."""

    def __init__(self, text: str, sub: str):
        self.text, self.sub, self.found = text, sub, -1

    def __call__(self, pos: int) -> int:
        """Position of the next `sub` at or after `pos`, or len(text) when there is none."""
        if self.found < pos:
            i = self.text.find(self.sub, pos)
            self.found = len(self.text) if i < 0 else i
        return self.found


def skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i].isspace():  # str.isspace is exactly the `\s` of `re` on str patterns
        i += 1
    return i


def number_or_text(text: str):
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


# `$` after re.match also accepts one trailing newline, as BFCL's `^...$` patterns do.
_J_INT, _J_LONG = re.compile(r"-?\d+$"), re.compile(r"-?\d+[lL]$")
_J_FLOAT = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_J_DOUBLE = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_F_SUFFIX, _L_SUFFIX = re.compile(r"[fF]$"), re.compile(r"[lL]$")
_ASLIST = re.compile(r"new\s+ArrayList<\w*>\(Arrays\.asList\(")
_ADDS = re.compile(r"new\s+ArrayList<\w*>\(\)\s*\{\{")
_EMPTY_LIST = re.compile(r"new\s+ArrayList<\w*>\(\)")
_ARRAY = re.compile(r"new\s+\w+\[\]\s*\{")
_MAP_HEAD, _MAP_BODY, _MAP_EMPTY = re.compile(r"new\s+HashMap<"), re.compile(r">\s*\(\)\s*\{"), re.compile(r">\s*\(\)")
JAVA_COLLECTIONS = ("Array", "ArrayList")


def decode_java(text: str, kind: str, items: str | None = None):
    """The value BFCL's checker reads from a Java argument `text` of declared type `kind` (`items`: the
    element type of Array/ArrayList). Raises where BFCL raises (Set, Hashtable, Queue, Stack, unknown types)."""
    if kind in ("byte", "short", "integer"):
        return int(text) if _J_INT.match(text) else text
    if kind == "long":
        return int(_L_SUFFIX.sub("", text)) if _J_LONG.match(text) else text
    if kind == "float":
        return float(_F_SUFFIX.sub("", text)) if _J_FLOAT.match(text) else text
    if kind == "double":
        return float(text) if _J_DOUBLE.match(text) else text
    if kind == "boolean":
        return text == "true" if text in ("true", "false") else text
    if kind in ("char", "String", "any"):  # BFCL's char pattern can never match: chars stay as written
        return text
    if kind == "ArrayList":
        return _java_arraylist(text, items)
    if kind == "Array":
        return _java_array(text, items)
    if kind == "HashMap":
        return _java_hashmap(text)
    raise ValueError(f"BFCL cannot convert Java values of type {kind!r}")


def java_literal(text: str):
    """An untyped Java literal (an element without a declared type, a HashMap value)."""
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if re.match(r"-?\d+[lL]$", text):
        return int(text[:-1])
    if _J_FLOAT.match(text):
        return float(_F_SUFFIX.sub("", text))
    return number_or_text(text)


def _java_element(text: str, items: str | None, quoted: bool):
    if quoted and items in ("char", "String"):
        return text[1:-1]
    return decode_java(text, items) if items else java_literal(text)


def _java_arraylist(text: str, items: str | None):
    # `Arrays.asList(...)`: the body runs to the first "))" on the same line (at least one character).
    close, newline = Next(text, "))"), Next(text, "\n")
    m = _ASLIST.search(text)
    while m:
        start = m.end()
        end = close(start + 1)
        if end < len(text) and newline(start) > end:
            return [_java_element(p.strip(), items, True) for p in text[start:end].split(",")]
        m = _ASLIST.search(text, m.start() + 1)
    m = _ADDS.search(text)
    if m:
        body = _add_block(text, m.end())
        if body is not None:
            return [_java_element(p.strip(), items, True) for p in _adds(body)]
    return [] if _EMPTY_LIST.search(text) else text


def _add_block(text: str, after: int) -> str | None:
    """The body BFCL's `\\{\\{\\s*(.+?)\\s*\\}\\}` (DOTALL) captures after the opening braces, or None."""
    d = skip_ws(text, after)
    j = text.find("}}", d + 1)
    if j >= 0:
        e = j
        while e > d + 1 and text[e - 1].isspace():
            e -= 1
        return text[d:e]
    if d > after and text.startswith("}}", d):  # backtracking gives the body one blank of the run
        return text[d - 1:d]
    return None  # no later `new ArrayList<>() {{` can match either: their bodies start further on


def _adds(body: str) -> list[str]:
    """The arguments of `add(...)` calls: each runs to the first ")" on its line (at least one character)."""
    out, pos, close, newline = [], 0, Next(body, ")"), Next(body, "\n")
    while True:
        s = body.find("add(", pos)
        if s < 0:
            return out
        end = close(s + 5)
        if end < len(body) and newline(s + 4) > end:
            out.append(body[s + 4:end])
            pos = end + 1
        else:
            pos = s + 1


def _java_array(text: str, items: str | None):
    close, newline = Next(text, "}"), Next(text, "\n")
    m = _ARRAY.search(text)
    while m:
        start = m.end()
        end = close(start)
        if end < len(text) and newline(start) > end:
            parts = (x.strip() for x in text[start:end].split(","))
            return [decode_java(x, items) if items else java_literal(x) for x in parts if x]
        m = _ARRAY.search(text, m.start() + 1)
    return text


def _java_hashmap(text: str):
    head = _MAP_HEAD.search(text)  # only the first `new HashMap<` can match: later ones see less text
    if head is None:
        return text
    m = _MAP_BODY.search(text, head.end())
    if m and text.find("}", m.end()) >= 0:
        b = skip_ws(text, m.end())
        d = skip_ws(text, b + 1 if text.startswith("{", b) else b)
        e = text.find("}", d)
        while e > d and text[e - 1].isspace():
            e -= 1
        body = text[d:e]
        return {k: java_literal(v.strip()) for k, v in _puts(body)} if body.strip() else {}
    # The empty-map pattern has no DOTALL: its `<...>` must close on the line where `new HashMap<` ends.
    newline, m = Next(text, "\n"), None
    while head:
        if m is None or m.start() < head.end():
            m = _MAP_EMPTY.search(text, head.end())
            if m is None:
                return text
        if newline(head.end()) > m.start():
            return {}
        head = _MAP_HEAD.search(text, head.start() + 1)
    return text


def _puts(body: str) -> list[tuple[str, str]]:
    """BFCL's `put\\(\\"(.*?)\\",\\s*(.*?)\\)` findall, in linear time: a key ends at the first `",` whose value
    (after blanks, which may span lines) reaches a ")" before the end of its line."""
    n, pairs, pos = len(body), [], 0
    close, newline = Next(body, ")"), Next(body, "\n")
    good, i = [], body.find('",')  # positions of `",` that end a key with a well-formed value
    while i >= 0:
        q = skip_ws(body, i + 2)
        if close(q) < n and close(q) < newline(q):
            good.append((i, q, close(q)))
        i = body.find('",', i + 1)
    line_end, k = Next(body, "\n"), 0
    while True:
        s = body.find('put("', pos)
        if s < 0:
            return pairs
        while k < len(good) and good[k][0] < s + 5:
            k += 1
        if k < len(good) and line_end(s + 5) > good[k][0]:
            i, q, end = good[k]
            pairs.append((body[s + 5:i], body[q:end]))
            pos = end + 1
        else:
            pos = s + 1


_JAVA_NAMES = {"integer": "int", "any": "Object", "String": "String", "long": "long", "char": "char",
               "double": "double", "float": "float", "boolean": "boolean", "byte": "byte", "short": "short"}


def encode_java(value, kind: str, items: str | None = None) -> str:
    """Java source for `value` that `decode_java(..., kind, items)` reads back (strings pass as written)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if kind == "long" and isinstance(value, int):
        return f"{value}L"
    if kind == "float" and isinstance(value, (int, float)):
        return f"{value}f"
    if kind == "ArrayList" and isinstance(value, list):
        if not value:
            return "new ArrayList<>()"
        quote = items in ("char", "String")
        parts = [f'"{v}"' if quote else (encode_java(v, items) if items else _java_source(v)) for v in value]
        return f"new ArrayList<>(Arrays.asList({', '.join(parts)}))"
    if kind == "Array" and isinstance(value, list):
        parts = [encode_java(v, items) if items else _java_source(v) for v in value]
        return f"new {_JAVA_NAMES.get(items, 'Object')}[]{{{', '.join(parts)}}}"
    if kind == "HashMap" and isinstance(value, dict):
        if not value:
            return "new HashMap<>()"
        puts = " ".join(f'put("{k}", {_java_source(v)});' for k, v in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    return repr(value) if isinstance(value, float) else str(value)


def _java_source(value) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)
