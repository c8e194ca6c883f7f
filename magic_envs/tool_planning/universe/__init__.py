"""The synthetic API universe: 119 functions over 13 domains, one deterministic simulator, and the helpers
that turn them into tool-calling and planning tasks.

    >>> import numpy as np
    >>> from magic_envs.tool_planning.universe import load_universe
    >>> u = load_universe()
    >>> fn = u.functions["get_weather_forecast"]
    >>> fn.domain, fn.split, fn.required
    ('weather', 'iid', ('city', 'date'))
    >>> u.call("get_weather_forecast", {"city": "paris", "date": "2025-03-03"}, world_seed=7)["city"]
    'Paris'
    >>> u.call("get_weather_forecast", {"city": "Paris", "date": "03/03/2025"}, world_seed=7)
    {'error': "invalid date '03/03/2025': write dates as YYYY-MM-DD (years 1900 to 2100)"}
    >>> call = u.sample_call("get_weather_forecast", np.random.default_rng(0))
    >>> call.gold["units"]  # optional, not stated: may be omitted or given as its default
    ['', 'celsius']
    >>> text = u.render_request("get_weather_forecast", call.surfaces, np.random.default_rng(0))

Public API
----------
`load_universe()` -> Universe (cached; built from the domain modules in `domains/`).

Universe
    .functions            name -> ApiFunction; .domains: domain -> function names
    .functions_for(split) the functions of "iid" or "ood" (env split names "train"/"test"/"ood_*" work
                          too); the two sets are disjoint. OOD = the whole health and media domains plus one
                          function in each other domain (28 of 119).
    .tools(names)         OpenAI tool schemas
    .call(name, arguments, world_seed=0) -> dict
                          the simulated result; the same call in the same world always gives the same
                          answer; any problem is {"error": "<sentence>"}, never an exception
    .today(world_seed)    the world's current date, for tasks that say "today" or omit a date
    .sample_call(name, rng, with_optional=False, vocab="iid") -> SampledCall(arguments, gold, surfaces)
                          canonical arguments; BFCL possible-answer gold ({param: [acceptable]}, "" for an
                          optional parameter that may be omitted, plus its default); each value's surface
                          form in the request ("March 3, 2025", "2.5 km", "15%", "euros", "paris")
    .render_request(name, surfaces, rng) -> str     one request (paraphrase templates + optional clauses)
    .render_requests([(name, surfaces), ...], rng)  several calls in one message (parallel tasks)
    .dependency_edges(split=None) -> [DependencyEdge(producer, output, consumer, param, etype)]
    .sharing_edges(split=None)    -> [SharingEdge(a, a_param, b, b_param, etype)]
    .condition_fields(split=None) -> [ConditionField(function, path, kind, values)]

ApiFunction: .name .description .domain .split .params (specs) .returns (typed result spec) .required
    .optional .conditions .schema() (OpenAI tool dict) .parameters() (JSON schema) .tool() (core Tool)

Helpers: `graph.extract(result, path)` reads values at a result path ("flights[].flight_id");
`graph.feed(arguments, path, value)` places a value at a parameter path; `requests.read_surface(spec,
text)` reads a surface back to its canonical value.

How it fits together: entity types (etypes.py, measures.py, ids.py) give every parameter and result field
a meaning beyond its JSON type; world_geo.py and world_things.py hold the world's records (pure functions
of the world seed); kinds.py maps a function's declared `record`/`search`/`refs` to them; simulator.py is
the one interpreter; requests.py writes tasks; graph.py derives the typed graphs.
"""

from __future__ import annotations

from functools import lru_cache

from magic_envs.tool_planning.universe.api import Universe, split_vocab
from magic_envs.tool_planning.universe.graph import ConditionField, DependencyEdge, SharingEdge, extract, feed
from magic_envs.tool_planning.universe.model import ApiFunction
from magic_envs.tool_planning.universe.requests import SampledCall


@lru_cache(maxsize=1)
def load_universe() -> Universe:
    """The universe built from every domain module (cached: build once per process)."""
    return Universe.from_modules()


__all__ = ["ApiFunction", "ConditionField", "DependencyEdge", "SampledCall", "SharingEdge", "Universe", "extract",
           "feed", "load_universe", "split_vocab"]
