"""The service databases: plain JSON dicts in tau2-bench's schema, hashed as tau2-bench hashes them.

A database is `{table: {id: record}}` (retail: products, users, orders; airline: flights, users,
reservations). Tools read and change it in place; a failing tool raises `ToolError` before it changes
anything. `db_hash` is tau2-bench's `get_db_hash` (sha256 of the sorted-key JSON dump), so the DB part of
the reward compares whole states, side effects included, and our hashes of tau2's own data equal tau2's.

    >>> db_hash({"users": {}}) == db_hash(json.loads('{"users": {}}'))
    True
"""

from __future__ import annotations

import ast
import hashlib
import json
import operator
import pickle


class ToolError(Exception):
    """A tool refused a call; the agent sees "Error: <message>" and the database is unchanged."""


def db_hash(db: dict) -> str:
    """sha256 of `json.dumps(db, sort_keys=True, default=str)`, as tau2-bench's get_db_hash."""
    return hashlib.sha256(json.dumps(db, sort_keys=True, default=str).encode()).hexdigest()


def fresh_copy(db: dict) -> dict:
    """An independent copy, so a tool run on it never touches the original. A pickle round trip: the same
    result as copy.deepcopy on plain data, about 4x faster (envs copy a whole database several times per reset)."""
    return pickle.loads(pickle.dumps(db, pickle.HIGHEST_PROTOCOL))


def dump(value) -> str:
    """A tool result as tau2-bench prints it: strings as they are, anything else as JSON in field order."""
    return value if isinstance(value, str) else json.dumps(value, default=str)


def check_call(toolkit: str, tools: dict, name, arguments) -> None:
    """Raise ToolError, with the text tau2-bench gives, unless `name` is one of `tools` (name -> Tool) and
    `arguments` a mapping of exactly its parameter names whose values fit its schema. tau2 calls the method
    `<toolkit>.<name>(**arguments)`, so unknown and missing names get Python's own TypeError text."""
    if not isinstance(name, str) or name not in tools:
        raise ToolError(f"Tool '{name}' not found.")
    if not isinstance(arguments, dict):
        raise ToolError(f"{toolkit}.{name}() argument after ** must be a mapping, not {type(arguments).__name__}")
    params = tools[name].parameters["required"]
    for key in arguments:
        if key not in params:
            raise ToolError(f"{toolkit}.{name}() got an unexpected keyword argument '{key}'")
    missing = [f"'{p}'" for p in params if p not in arguments]
    if missing:
        listed = missing[0] if len(missing) == 1 else (f"{missing[0]} and {missing[1]}" if len(missing) == 2 else
                                                       ", ".join(missing[:-1]) + f", and {missing[-1]}")
        s = "" if len(missing) == 1 else "s"
        raise ToolError(f"{toolkit}.{name}() missing {len(missing)} required positional argument{s}: {listed}")
    problem = tools[name].check(arguments)
    if problem:
        raise ToolError(problem)


def tau2_file(package: str, domain: str, filename: str, pip: str) -> str:
    """The text of one of tau2-bench's data files for `domain`, read from its installed PyPI `package`;
    ImportError naming the `pip` command when the package is absent."""
    from importlib.resources import files

    try:
        root = files(package)
    except ModuleNotFoundError:
        raise ImportError(f"tau2-bench's {domain} data needs the optional package: {pip}") from None
    return root.joinpath("data", "tau2", "domains", domain, filename).read_text(encoding="utf-8")


def calculate(expression: str) -> str:
    """tau2-bench's `calculate` tool: the value of an arithmetic expression rounded to 2 decimals, as text;
    computed from the parsed expression (no eval) with Python's own results and error messages.

    >>> calculate("(100 - 12.5) * 2"), calculate("1/3")
    ('175.0', '0.33')
    """
    if not all(char in "0123456789+-*/(). " for char in expression):
        raise ToolError("Invalid characters in expression")
    try:
        return str(round(float(_arith(expression)), 2))
    except ToolError:
        raise
    except Exception as e:  # noqa: BLE001  (Python's own message, as tau2's eval gives it: SyntaxError...)
        raise ToolError(str(e)) from None


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _arith(expression: str):
    """Python's value of an expression of numbers, + - * / // ** and parentheses, without eval."""
    tree = ast.parse(expression.lstrip(" \t"), "<string>", "eval")  # eval strips leading blanks too

    def value(node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Tuple) and not node.elts:  # "()": float() then fails as in tau2
            return ()
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](value(node.operand))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = value(node.left), value(node.right)
            # int ** huge int would compute for hours before float() rejects the result.
            if (isinstance(node.op, ast.Pow) and type(left) is int and type(right) is int and abs(left) > 1
                    and right > 0 and right * abs(left).bit_length() > 1_000_000):
                raise OverflowError("int too large to convert to float")
            return _BINARY[type(node.op)](left, right)
        raise ToolError("Invalid characters in expression")  # unreachable with the allowed characters

    return value(tree.body)
