"""ApiFunction: one function of the universe, built from its dict literal in a domain module.

A parameter spec is a dict: `type` (an entity type name, "enum", "array" with `items`, or "object" with
`props`), `description`, and optionally `default` or `optional: True` (either makes it optional), `enum`,
`min`/`max`, and request-writing hints (`say`, `pool`, `range`, `after`, `differs`). A return spec maps a
field to an entity type name, a list of enum values, "array:<type>", a dict (an object) or a one-dict
list (a list of objects). Behaviour keys (`record`, `refs`, `search`, `compute`, `fill`, `bind`, `filters`,
`sort`, `limit`) are read by the simulator.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from magic_envs.tool_planning.universe import ids as _ids  # noqa: F401  (registers the id entity types)
from magic_envs.tool_planning.universe import measures as _measures  # noqa: F401  (registers unit types)
from magic_envs.tool_planning.universe.etypes import ETYPES

FORMAT_HINTS = {"date": "YYYY-MM-DD", "time": "HH:MM"}
BEHAVIOUR_KEYS = ("record", "refs", "search", "compute", "fill", "bind", "filters", "sort", "limit", "list")


def is_optional(spec: dict) -> bool:
    return "default" in spec or spec.get("optional", False)


def param_schema(spec: dict) -> dict:
    """The JSON schema of one parameter spec (recursively for arrays and objects)."""
    kind = spec["type"]
    description = spec.get("description", "")
    hint = FORMAT_HINTS.get(kind)
    if hint and hint not in description:
        description = f"{description} Format: {hint}.".strip()
    out: dict = {"description": description} if description else {}
    if kind == "array":
        out.update(type="array", items=param_schema(spec["items"]))
        if "min_items" in spec:
            out["minItems"] = spec["min_items"]
    elif kind == "object":
        props = spec["props"]
        out.update(type="object", properties={k: param_schema(v) for k, v in props.items()},
                   required=[k for k, v in props.items() if not is_optional(v)])
    elif kind == "enum":
        out.update(type="string", enum=list(spec["enum"]))
    else:
        out["type"] = ETYPES[kind].json
    if "min" in spec:
        out["minimum"] = spec["min"]
    if "max" in spec:
        out["maximum"] = spec["max"]
    if spec.get("default") is not None:
        out["default"] = spec["default"]
    return out


def returns_schema(spec) -> object:
    """A compact, readable form of a return spec (for documentation and prompts)."""
    if isinstance(spec, dict):
        return {k: returns_schema(v) for k, v in spec.items()}
    if isinstance(spec, list) and spec and isinstance(spec[0], dict):
        return [returns_schema(spec[0])]
    if isinstance(spec, (list, tuple)):
        return "one of " + ", ".join(map(str, spec))
    return spec


@dataclass(frozen=True)
class ApiFunction:
    """One callable tool: its schema, domain, split, typed parameters and returns, and request phrasing."""

    name: str
    description: str
    domain: str
    split: str
    params: dict
    returns: dict
    conditions: tuple = ()
    say: tuple = ()
    opt: dict = field(default_factory=dict)
    behaviour: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict, domain: str, split: str) -> "ApiFunction":
        unknown = set(d) - {"name", "description", "split", "params", "returns", "conditions", "say", "opt",
                            *BEHAVIOUR_KEYS}
        if unknown:
            raise ValueError(f"{d.get('name')}: unknown keys {sorted(unknown)}")
        return cls(d["name"], d["description"], domain, d.get("split", split), d["params"], d["returns"],
                   tuple(d.get("conditions", ())), tuple(d.get("say", ())), d.get("opt", {}),
                   {k: d[k] for k in BEHAVIOUR_KEYS if k in d})

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(p for p, s in self.params.items() if not is_optional(s))

    @property
    def optional(self) -> tuple[str, ...]:
        return tuple(p for p, s in self.params.items() if is_optional(s))

    def parameters(self) -> dict:
        return {"type": "object", "properties": {p: param_schema(s) for p, s in self.params.items()},
                "required": list(self.required)}

    def schema(self) -> dict:
        """The OpenAI `tools` entry."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters()}}

    def tool(self):
        """The core Tool (validates arguments with jsonschema; imported lazily, it is slow to import)."""
        from magic_envs.core.tools import Tool

        return Tool(self.name, self.description, self.parameters())

    def returns_doc(self) -> object:
        return returns_schema(self.returns)
