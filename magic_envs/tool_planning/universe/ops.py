"""The simulator's small library: computations named by `compute`, and the expressions `fill` uses.

A `fill` expression is data: a string names an argument ("passengers"), a referenced record's attribute
("flight_id.price", the record fetched for that id argument) or the function's record attribute; "=text"
is a literal; "new" a fresh id for the field; a list is [operator, operand...]. Nothing is ever eval'ed.
"""

from __future__ import annotations

import math
import re
from datetime import date, timedelta

from magic_envs.tool_planning.universe import words
from magic_envs.tool_planning.universe.etypes import BadValue
from magic_envs.tool_planning.universe.world_geo import clock, minutes_of, today
from magic_envs.tool_planning.universe.world_things import fx_rate

_ARITH = {"*": lambda a, b: a * b, "+": lambda a, b: a + b, "-": lambda a, b: a - b,
          "/": lambda a, b: a / b if b else math.inf, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b,
          "<": lambda a, b: a < b, ">": lambda a, b: a > b, "==": lambda a, b: a == b}


def evaluate(expr, env: dict):
    """Evaluate a fill expression; env holds args, refs (param -> record), record and the id maker."""
    if isinstance(expr, list):
        op, *rest = expr
        if op == "if":
            return evaluate(rest[1] if evaluate(rest[0], env) else rest[2], env)
        if op == "either":  # the first operand that exists: an optional argument, else a fallback
            for x in rest:
                try:
                    return evaluate(x, env)
                except KeyError:
                    continue
            raise KeyError(str(rest))
        vals = [evaluate(x, env) for x in rest]
        if op in _ARITH:
            out = _ARITH[op](*vals)
            return round(out, 2) if isinstance(out, float) else out
        if op == "and":
            return all(vals)
        if op == "not":
            return not vals[0]
        if op == "len":
            return len(vals[0])
        if op == "days":
            return (date.fromisoformat(vals[1]) - date.fromisoformat(vals[0])).days
        if op == "add_days":
            return (date.fromisoformat(vals[0]) + timedelta(days=vals[1])).isoformat()
        if op == "add_minutes":
            return clock(minutes_of(vals[0]) + vals[1])
        if op == "min":
            return min(vals)
        if op == "path_join":
            return f"{vals[0].rstrip('/')}/{vals[1]}"
        if op == "concat":
            return "".join(map(str, vals))
        if op == "dated_id":  # EV-CODE -> EV-YYYYMMDD-CODE: event ids carry their date
            prefix, code = env["new"]().split("-")
            return f"{prefix}-{vals[0].replace('-', '')}-{code}"
        raise ValueError(f"unknown operator {op!r}")
    if not isinstance(expr, str):
        return expr
    if expr.startswith("="):
        return expr[1:]
    if expr == "new":
        return env["new"]()
    if "." in expr:
        ref, attr = expr.split(".", 1)
        return env["refs"][ref][attr]
    for scope in (env["args"], env["record"]):
        if expr in scope:
            return scope[expr]
    raise KeyError(expr)


# ---- computations --------------------------------------------------------------------------------------
_TOKEN = re.compile(r"\s*(\d+\.?\d*|\.\d+|[-+*/^()%])")


def _power(v: float, w: float) -> float:
    if abs(w) > 100 or (v < 0 and not float(w).is_integer()) or (v == 0 and w < 0):
        raise BadValue("the power is undefined or too large")
    try:
        return v ** w
    except OverflowError:
        raise BadValue("the power is too large") from None


_BINARY = {"+": lambda v, w: v + w, "-": lambda v, w: v - w, "*": lambda v, w: v * w,
           "/": lambda v, w: v / w, "%": math.fmod, "^": _power}


def _expression(world, a):
    """Arithmetic with + - * / ^ % and parentheses, by recursive descent (model text never meets eval)."""
    text = a["expression"]
    tokens, pos = [], 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        if not m:
            raise BadValue(f"cannot parse the expression near {text[pos:pos + 10]!r}")
        tokens.append(m[1])
        pos = m.end()
    tokens.append("")

    def parse(level, i):
        if level == 3:  # unary minus and atoms
            tok = tokens[i]
            if tok == "-":
                v, i = parse(3, i + 1)
                return -v, i
            if tok == "(":
                v, i = parse(0, i + 1)
                if tokens[i] != ")":
                    raise BadValue("unbalanced parentheses in the expression")
                return v, i + 1
            try:
                return float(tok), i + 1
            except ValueError:
                raise BadValue("the expression is incomplete") from None
        ops = (("+", "-"), ("*", "/", "%"), ("^",))[level]
        v, i = parse(level + 1, i)
        while tokens[i] in ops:
            op = tokens[i]
            w, i = parse(level + (1 if op != "^" else 0), i + 1)  # ^ is right-associative
            if op in "/%" and w == 0:
                raise BadValue("division by zero")
            v = _BINARY[op](v, w)
        return v, i
    value, i = parse(0, 0)
    if tokens[i] != "" or not math.isfinite(value):
        raise BadValue("the expression is malformed or its value is not finite")
    return {"expression": text, "result": round(value, 10)}


def _quadratic(world, a):
    qa, qb, qc = a["a"], a["b"], a["c"]
    if qa == 0:
        raise BadValue("a must be non-zero for a quadratic equation")
    disc = qb * qb - 4 * qa * qc
    if disc < 0:
        re_, im = -qb / (2 * qa), math.sqrt(-disc) / (2 * abs(qa))
        return {"discriminant": disc, "real_roots": [], "complex_roots": [f"{re_:.4g}+{im:.4g}i",
                                                                          f"{re_:.4g}-{im:.4g}i"]}
    roots = sorted({round((-qb + s * math.sqrt(disc)) / (2 * qa), 6) for s in (1, -1)})
    return {"discriminant": disc, "real_roots": roots, "complex_roots": []}


def _stats(world, a):
    import statistics  # imported on first use: it pulls in fractions and decimal

    xs = a["numbers"]
    if not xs:
        raise BadValue("numbers must not be empty")
    table = {"mean": lambda: statistics.fmean(xs), "median": lambda: statistics.median(xs),
             "std": lambda: statistics.pstdev(xs), "min": lambda: min(xs), "max": lambda: max(xs),
             "sum": lambda: math.fsum(xs)}
    return {"count": len(xs), "results": {m: round(table[m](), 6) for m in a.get("measures", ["mean"])}}


UNITS = {"meter": ("length", 1), "kilometer": ("length", 1000), "mile": ("length", 1609.344),
         "foot": ("length", 0.3048), "inch": ("length", 0.0254), "gram": ("mass", 1), "kilogram": ("mass", 1000),
         "pound": ("mass", 453.59237), "ounce": ("mass", 28.349523), "liter": ("volume", 1),
         "milliliter": ("volume", 0.001), "gallon": ("volume", 3.785412), "celsius": ("temperature", None),
         "fahrenheit": ("temperature", None), "kelvin": ("temperature", None)}


def _convert(world, a):
    (qa, fa), (qb, fb) = UNITS[a["from_unit"]], UNITS[a["to_unit"]]
    if qa != qb:
        raise BadValue(f"cannot convert {qa} ({a['from_unit']}) to {qb} ({a['to_unit']})")
    v = a["value"]
    if qa == "temperature":
        c = {"celsius": v, "fahrenheit": (v - 32) * 5 / 9, "kelvin": v - 273.15}[a["from_unit"]]
        out = {"celsius": c, "fahrenheit": c * 9 / 5 + 32, "kelvin": c + 273.15}[a["to_unit"]]
    else:
        out = v * fa / fb
    return {"value": v, "from_unit": a["from_unit"], "to_unit": a["to_unit"], "result": round(out, 6)}


def _gcd_lcm(world, a):
    xs = [abs(x) for x in a["numbers"]]
    if len(xs) < 2 or 0 in xs:
        raise BadValue("give at least two non-zero integers")
    return {"gcd": math.gcd(*xs), "lcm": math.lcm(*xs)}


def _factors(world, a):
    n = a["number"]
    if not 2 <= n <= 10**12:
        raise BadValue("number must lie between 2 and 10^12")
    out, d = [], 2
    while d * d <= n:
        while n % d == 0:
            out.append(d)
            n //= d
        d += 1
    return {"number": a["number"], "prime_factors": out + ([n] if n > 1 else []), "is_prime": not out}


def _compound(world, a):
    p, r, y, k = a["principal"], a["annual_rate_pct"] / 100, a["years"], a.get("compounds_per_year", 12)
    final = p * (1 + r / k) ** (k * y)
    return {"final_amount": round(final, 2), "interest_earned": round(final - p, 2)}


def _loan(world, a):
    p, r, n = a["principal"], a["annual_rate_pct"] / 1200, a["years"] * 12
    monthly = p / n if r == 0 else p * r / (1 - (1 + r) ** -n)
    return {"monthly_payment": round(monthly, 2), "total_paid": round(monthly * n, 2),
            "total_interest": round(monthly * n - p, 2)}


def _tip(world, a):
    tip = a["bill_amount"] * a["tip_rate"]
    total = a["bill_amount"] + tip
    return {"tip": round(tip, 2), "total": round(total, 2), "per_person": round(total / a.get("split_between", 1), 2)}


def _bmi(world, a):
    bmi = a["weight_kg"] / (a["height_cm"] / 100) ** 2
    band = "underweight" if bmi < 18.5 else "normal" if bmi < 25 else "overweight" if bmi < 30 else "obese"
    return {"bmi": round(bmi, 1), "category": band}


def _convert_money(world, a):
    rate = fx_rate(world, a["from_currency"], a["to_currency"], a.get("date") or today(world))
    return {"amount": a["amount"], "from_currency": a["from_currency"], "to_currency": a["to_currency"],
            "rate": rate, "converted_amount": round(a["amount"] * rate, 2)}


def _nutrition(world, a):
    kcal, protein, carbs, fat = words.FOODS[a["food"]]
    f = a.get("amount_g", 100) / 100
    return {"food": a["food"], "amount_g": a.get("amount_g", 100), "calories": round(kcal * f, 1),
            "protein_g": round(protein * f, 1), "carbs_g": round(carbs * f, 1), "fat_g": round(fat * f, 1)}


COUPONS = {"SAVE10": 0.10, "WELCOME15": 0.15, "SPRING20": 0.20, "VIP25": 0.25}


def _coupon(world, a):
    rate = COUPONS.get(a["code"].upper(), 0.0)
    discount = round(a["cart_total"] * rate, 2)
    return {"code": a["code"], "valid": rate > 0, "discount": discount,
            "new_total": round(a["cart_total"] - discount, 2)}


COMPUTE = {"coupon": _coupon, "expression": _expression, "quadratic": _quadratic, "statistics": _stats,
           "convert_units": _convert, "gcd_lcm": _gcd_lcm, "prime_factors": _factors, "compound_interest": _compound,
           "loan": _loan, "tip": _tip, "bmi": _bmi, "convert_currency": _convert_money, "nutrition": _nutrition}
