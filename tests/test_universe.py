"""The synthetic API universe: schemas, the simulator's purity and consistency, request writing, typed graphs."""

import json
import re
import subprocess
import sys

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magic_envs.core.tools import Tool
from magic_envs.tool_planning.universe import Universe, extract, feed, load_universe, split_vocab
from magic_envs.tool_planning.universe.etypes import ETYPES
from magic_envs.tool_planning.universe.graph import input_fields
from magic_envs.tool_planning.universe.requests import read_surface

U = load_universe()
NAMES = sorted(U.functions)
SAMPLES = 12  # per function, alternating required-only / with optional parameters and IID / OOD values


def samples(name):
    for k in range(SAMPLES):
        rng = np.random.default_rng([NAMES.index(name), k])
        yield k, rng, U.sample_call(name, rng, with_optional=k % 2 == 1, vocab=("iid", "ood")[k // 2 % 2])


# ---- size, schemas and splits -------------------------------------------------------------------------------
def test_size_and_domains():
    assert len(U) >= 100 and len(U.domains) >= 10
    import magic_envs.tool_planning.universe as package  # its docstring states the counts: keep them true
    assert f"{len(U)} functions over {len(U.domains)} domains" in package.__doc__
    assert f"({len(U.functions_for('ood'))} of {len(U)})" in package.__doc__
    assert {"travel", "weather", "finance", "calendar", "messaging", "files", "shopping", "maps", "math",
            "devices"} <= set(U.domains)
    assert all(len(names) >= 7 for names in U.domains.values())


@pytest.mark.parametrize("name", NAMES)
def test_schema_is_a_valid_openai_tool(name):
    fn = U.functions[name]
    schema = fn.schema()
    assert schema["type"] == "function" and re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", schema["function"]["name"])
    params = schema["function"]["parameters"]
    jsonschema.Draft202012Validator.check_schema(params)
    assert schema["function"]["description"] and params["type"] == "object"
    assert set(params["required"]) <= set(params["properties"])
    for prop in params["properties"].values():
        assert prop["description"] and prop["type"] in ("string", "integer", "number", "boolean", "array", "object")
    assert Tool.from_schema(json.loads(json.dumps(schema))).schema() == schema
    assert fn.returns and fn.say and set(fn.opt) == set(fn.optional)


def test_parameter_types_cover_the_json_schema_kinds():
    kinds = set()

    def walk(p):
        kinds.add("enum" if "enum" in p else p["type"])
        for sub in [p.get("items")] + list(p.get("properties", {}).values()):
            if sub:
                walk(sub)
    for fn in U.functions.values():
        for p in fn.parameters()["properties"].values():
            walk(p)
    assert kinds == {"string", "integer", "number", "boolean", "enum", "array", "object"}
    assert any(fn.optional for fn in U.functions.values()) and any("default" in p for fn in U.functions.values()
                                                                    for p in fn.parameters()["properties"].values())


def test_splits_are_disjoint_and_sized_as_documented():
    iid, ood = ({fn.name for fn in U.functions_for(s)} for s in ("iid", "ood"))
    assert not iid & ood and iid | ood == set(U.functions)
    assert 0.20 <= len(ood) / len(U) <= 0.25
    assert {f for d in ("health", "media") for f in U.domains[d]} <= ood  # held-out domains
    assert all(set(names) & ood and set(names) & iid for d, names in U.domains.items() if d not in ("health", "media"))
    assert [split_vocab(s) for s in ("train", "test", "ood", "ood_tools")] == ["iid", "iid", "ood", "ood"]
    with pytest.raises(ValueError):
        split_vocab("validation")


# ---- sampling, gold and requests -----------------------------------------------------------------------------
def _in_gold(spec, value, gold):
    if spec["type"] == "object":
        return all(_in_gold(spec["props"][k], v, gold[0][k]) for k, v in value.items())
    if spec["type"] == "array" and spec["items"]["type"] == "object":
        return len(value) == len(gold[0]) and all(
            all(v in g[k] for k, v in item.items()) for item, g in zip(value, gold[0]))
    return value in gold


@pytest.mark.parametrize("name", NAMES)
def test_sampled_calls_validate_succeed_and_match_their_gold(name):
    fn = U.functions[name]
    validator = jsonschema.Draft202012Validator(fn.parameters())
    for k, rng, call in samples(name):
        assert not list(validator.iter_errors(call.arguments)), call.arguments
        assert set(call.gold) == set(fn.params)
        for p, spec in fn.params.items():
            if p in call.arguments:
                assert _in_gold(spec, call.arguments[p], call.gold[p]), (p, call.arguments[p], call.gold[p])
            else:
                assert "" in call.gold[p] and p in fn.optional
        result = U.call(name, call.arguments, world_seed=k)
        assert "error" not in result, (call.arguments, result)
        assert json.loads(json.dumps(result)) == result
        explicit = {p: s["default"] for p, s in fn.params.items() if s.get("default") is not None}
        assert U.call(name, {**explicit, **call.arguments}, k) == result  # a default means the same as omitting it


@pytest.mark.parametrize("name", NAMES)
def test_requests_state_every_value_in_a_readable_surface_form(name):
    fn = U.functions[name]
    for template in fn.say:
        assert set(re.findall(r"\{(\w+)\}", template)) == set(fn.required) and not template.startswith("{")
    for p, fragments in fn.opt.items():
        assert all(set(re.findall(r"\{(\w+)\}", f)) == {p} for f in fragments)
    for k, rng, call in samples(name):
        text = U.render_request(name, call.surfaces, rng)
        for p, said in call.surfaces.items():
            assert said in text, (p, said, text)
            spec = fn.params[p]
            if spec["type"] not in ("array", "object"):
                assert read_surface(spec, said) in call.gold[p], (p, said, call.gold[p])


@pytest.mark.parametrize("spec, text, value", [
    ({"type": "date"}, "March 3, 2025", "2025-03-03"), ({"type": "date"}, "the 21st of June 2026", "2026-06-21"),
    ({"type": "date"}, "Dec 2nd, 2025", "2025-12-02"), ({"type": "date"}, "3 March 2025", "2025-03-03"),
    ({"type": "time"}, "3:30 PM", "15:30"), ({"type": "time"}, "12:15am", "00:15"),
    ({"type": "distance_m"}, "2.5 km", 2500), ({"type": "distance_m"}, "4,500 m", 4500),
    ({"type": "duration_min"}, "1.5 hours", 90), ({"type": "duration_min"}, "2 hours and 15 minutes", 135),
    ({"type": "fraction"}, "15%", 0.15), ({"type": "fraction"}, "18 percent", 0.18),
    ({"type": "currency"}, "euros", "EUR"), ({"type": "currency"}, "gbp", "GBP"), ({"type": "city"}, "paris", "Paris"),
    ({"type": "count"}, "three", 3), ({"type": "height_cm"}, "1.78 m", 178), ({"type": "volume_ml"}, "1.5 liters",
                                                                              1500),
    ({"type": "phone_number"}, "+1 555-012-3456", "+15550123456"), ({"type": "stock_symbol"}, "aapl", "AAPL"),
    ({"type": "amount"}, "1,250.50", 1250.5),
])
def test_light_normalisation(spec, text, value):
    assert read_surface(spec, text) == value


def test_parallel_requests_join_every_call():
    rng = np.random.default_rng(3)
    calls = [U.sample_call(n, rng) for n in ("get_weather_forecast", "get_weather_forecast", "search_flights")]
    text = U.render_requests([(n, c.surfaces) for n, c in zip(("get_weather_forecast",) * 2 + ("search_flights",),
                                                              calls)],
                             rng)
    assert all(s in text for c in calls for s in c.surfaces.values())


def test_pinned_arguments_are_respected_and_dependents_agree():
    rng = np.random.default_rng(0)
    for _ in range(30):
        call = U.sample_call("book_hotel", rng, fixed={"check_out": "2025-05-02"})
        assert call.arguments["check_in"] < "2025-05-02" and "error" not in U.call("book_hotel", call.arguments, 1)
        call = U.sample_call("search_flights", rng, fixed={"destination": "Rome"})
        assert call.arguments["origin"] != "Rome"


# ---- the simulator --------------------------------------------------------------------------------------------
def test_golden_result_pins_the_world():
    assert U.call("get_weather_forecast", {"city": "Paris", "date": "2025-03-03"}, 7) == {
        "city": "Paris", "date": "2025-03-03", "condition": "cloudy", "temp_high": 12.7, "temp_low": -0.4,
        "precip_chance": 21}


def test_determinism_and_worlds_differ():
    fresh = Universe.from_modules()
    args = {"city": "Lisbon", "date": "2025-08-01"}
    assert U.call("get_weather_forecast", args, 3) == fresh.call("get_weather_forecast", dict(args), 3)
    assert len({json.dumps(U.call("get_weather_forecast", args, w)) for w in range(10)}) > 5
    script = ("from magic_envs.tool_planning.universe import load_universe as L;import json;"
              "print(json.dumps(L().call('search_flights',{'origin':'Oslo','destination':'Rome','date':'2025-06-01'},11)))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == U.call("search_flights", {"origin": "Oslo", "destination": "Rome", "date": "2025-06-01"},
                                     11)


def test_tools_agree_on_shared_world_records():
    w, day = 5, "2025-10-14"
    forecast = U.call("get_weather_forecast", {"city": "Oslo", "date": day}, w)
    assert U.call("get_historical_weather", {"city": "oslo", "date": day}, w)["condition"] == forecast["condition"]
    compared = U.call("compare_weather", {"cities": ["Rome", "Oslo"], "date": day}, w)["forecasts"][1]
    assert compared["temp_high"] == forecast["temp_high"]
    fahrenheit = U.call("get_weather_forecast", {"city": "Oslo", "date": day, "units": "fahrenheit"}, w)
    assert fahrenheit["temp_high"] == round(forecast["temp_high"] * 9 / 5 + 32, 1)
    found = U.call("search_flights", {"origin": "Oslo", "destination": "Rome", "date": day}, w)["flights"][0]
    details = U.call("get_flight_details", {"flight_id": found["flight_id"]}, w)
    assert {k: details[k] for k in found} == found
    hotel = U.call("search_hotels", {"city": "Rome", "check_in": day, "check_out": "2025-10-16"}, w)["hotels"][0]
    assert U.call("get_hotel_details", {"hotel_id": hotel["hotel_id"]},
                  w)["price_per_night"] == hotel["price_per_night"]
    history = U.call("get_stock_history", {"symbol": "AAPL", "start_date": "2025-10-01", "end_date": day}, w)["prices"]
    assert history[-1]["close"] == U.call("get_stock_price", {"symbol": "aapl", "date": day}, w)["price"]
    rate = U.call("get_exchange_rate", {"base_currency": "EUR", "target_currency": "JPY", "date": day}, w)["rate"]
    assert U.call("convert_currency", {"amount": 10, "from_currency": "euros", "to_currency": "JPY", "date": day},
                  w)["rate"] == rate
    events = U.call("list_events", {"date": day}, w)["events"]
    assert all(U.call("get_event", {"event_id": e["event_id"]}, w)["title"] == e["title"] for e in events)
    for slot in U.call("find_free_slots", {"date": day, "duration_minutes": 30}, w)["slots"]:
        assert all(slot["end_time"] <= e["start_time"] or slot["start_time"] >= e["end_time"] for e in events)
    route = {"origin": "Paris", "destination": "Brussels"}
    assert U.call("get_distance", route, w)["distance"] == U.call("get_directions", route, w)["distance_km"]


@pytest.mark.parametrize("name, arguments, message", [
    ("get_flight_details", {"flight_id": "FL-PAR-ROM-20250303-9"}, "no flight"),
    ("get_flight_details", {"flight_id": "AF1234"}, "no flight"),
    ("get_weather_forecast", {"city": "Paris", "date": "03/03/2025"}, "YYYY-MM-DD"),
    ("get_weather_forecast", {"city": "Atlantis", "date": "2025-03-03"}, "unknown city"),
    ("get_hotel_details", {"hotel_id": "HT-PAR-99"}, "no hotel"),
    ("read_file", {"path": "/home/user/Documents/missing.txt"}, "no such file"),
    ("get_account_balance", {"account_id": "XYZ-0000"}, "not one of your accounts"),
    ("book_hotel", {"hotel_id": "HT-PAR-01", "check_in": "2025-03-05", "check_out": "2025-03-01",
                    "guest_name": "A B"}, "after check_in"),
    ("search_flights", {"origin": "Paris", "destination": "paris", "date": "2025-03-03"}, "different"),
    ("get_event", {"event_id": "EV-20250230-1"}, "no event"),
    ("get_weather_forecast", {"city": "Paris"}, "missing required"),
    ("get_weather_forecast", {"city": "Paris", "date": "2025-03-03", "mood": "happy"}, "unexpected"),
    ("get_weather_forecast", {"city": 42, "date": "2025-03-03"}, "must be a string"),
    ("send_email", {"to": "a@b.com", "subject": "s", "body": "b"}, "must be an array"),
    ("nonexistent_tool", {}, "unknown function"),
])
def test_bad_calls_return_readable_errors(name, arguments, message):
    result = U.call(name, arguments, 1)
    assert set(result) == {"error"} and message in result["error"]


def _strategy(schema):
    kind = schema.get("type")
    if "enum" in schema:
        return st.sampled_from(schema["enum"]) | st.text(max_size=8)
    if kind == "string":
        return st.text(max_size=30) | st.sampled_from(["2025-03-03", "Paris", "FL-PAR-ROM-20250303-1", "CHK-1001",
                                                       "/home/user/Documents/notes.txt", "12:30", "a@b.co"])
    if kind == "integer":
        return st.integers(-10**6, 10**6)
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False, width=32) | st.integers(-10**6, 10**6)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(_strategy(schema["items"]), max_size=4)
    props = schema["properties"]
    return st.fixed_dictionaries({k: _strategy(props[k]) for k in schema["required"]},
                                 optional={k: _strategy(v) for k, v in props.items() if k not in schema["required"]})


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_schema_shaped_random_calls_never_raise(data):
    name = data.draw(st.sampled_from(NAMES))
    arguments = data.draw(_strategy(U.functions[name].parameters()))
    result = U.call(name, arguments, data.draw(st.integers(-2**63, 2**63)))
    assert isinstance(result, dict) and json.loads(json.dumps(result)) == result
    assert "could not process" not in result.get("error", "")  # no internal failure behind a readable error


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
                    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(NAMES) | st.text(max_size=20), JSON, JSON)
def test_junk_calls_never_raise(name, arguments, world):
    result = U.call(name, arguments, world)
    assert isinstance(result, dict) and json.dumps(result)


# ---- typed graphs ---------------------------------------------------------------------------------------------
def test_dependency_edges_are_typed_and_executable():
    edges = U.dependency_edges()
    assert len(edges) > 500 and len({e.etype for e in edges}) > 20
    kinds = {fn.name: dict(input_fields(fn)) for fn in U.functions.values()}
    for k, e in enumerate(edges):
        assert e.producer != e.consumer and kinds[e.consumer][e.param] == e.etype and ETYPES[e.etype].linkable
        for t in range(12):  # some producers return nothing on some draws (an empty search): try again
            rng = np.random.default_rng([k, t])
            values = extract(U.call(e.producer, U.sample_call(e.producer, rng).arguments, t), e.output)
            if not values:
                continue
            top = "." not in e.param and "[]" not in e.param
            call = U.sample_call(e.consumer, rng, fixed={e.param: values[0]} if top else None)
            arguments = call.arguments if top else feed(call.arguments, e.param, values[0])
            if "error" not in U.call(e.consumer, arguments, t):
                break
        else:
            pytest.fail(f"edge {e} never executed cleanly")
    ood = {fn.name for fn in U.functions_for("ood")}
    assert all(e.producer in ood and e.consumer in ood for e in U.dependency_edges("ood"))


def test_key_planning_edges_exist():
    pairs = {(e.producer, e.output, e.consumer, e.param) for e in U.dependency_edges()}
    for edge in [("search_flights", "flights[].flight_id", "book_flight", "flight_id"),
                 ("book_flight", "booking_id", "cancel_booking", "booking_id"),
                 ("search_contacts", "contacts[].email", "send_email", "to[]"),
                 ("search_doctors", "doctors[].next_available", "book_appointment", "date"),
                 ("get_flight_details", "destination", "get_weather_forecast", "city"),
                 ("list_files", "files[].path", "compress_files", "paths[]")]:
        assert edge in pairs, edge
    echoes = [e for e in U.dependency_edges() if e.producer == "get_weather_forecast" and e.output == "city"]
    assert not echoes  # an input echoed back is not the tool's output


def test_sharing_edges_join_functions_with_a_common_entity_parameter():
    edges = U.sharing_edges()
    assert len(edges) > 500
    for e in edges[::7]:
        inputs = {fn: dict(input_fields(U.functions[fn])) for fn in (e.a, e.b)}
        assert e.a != e.b and inputs[e.a][e.a_param] == inputs[e.b][e.b_param] == e.etype
    assert {e.etype for e in U.sharing_edges("ood")} and len(U.sharing_edges("iid")) < len(edges)


def test_condition_fields_take_their_declared_values_and_branch():
    fields = U.condition_fields()
    assert len(fields) > 60 and {f.kind for f in fields} == {"enum", "boolean", "numeric"}
    for f in fields:
        seen = set()
        for k, rng, call in samples(f.function):
            value = U.call(f.function, call.arguments, k)[f.path]
            if f.kind == "numeric":
                assert isinstance(value, (int, float)) and not isinstance(value, bool)
            else:
                assert value in f.values
            seen.add(json.dumps(value))
        if f.kind != "numeric" and f.function in ("get_weather_forecast", "get_flight_status", "transfer_money",
                                                  "check_availability", "book_hotel"):
            assert len(seen) > 1, f  # both branches of "if ... else ..." tasks occur


def test_import_is_light():
    script = ("import sys, magic_envs.tool_planning.universe as u; u.load_universe();"
              "print(sorted(m for m in ('torch', 'transformers', 'jsonschema') if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"
