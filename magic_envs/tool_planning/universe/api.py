"""The Universe object: every function, the simulator, request writing and the typed graphs in one place."""

from __future__ import annotations

from functools import cached_property

from magic_envs.tool_planning.universe import graph, requests, simulator
from magic_envs.tool_planning.universe.domains import MODULES
from magic_envs.tool_planning.universe.model import ApiFunction
from magic_envs.tool_planning.universe.world_geo import today

SPLITS = ("iid", "ood")


def split_vocab(split: str) -> str:
    """'iid' for the train and test splits, 'ood' for 'ood' and every 'ood_<what>' split."""
    if split in SPLITS:
        return split
    if split in ("train", "test"):
        return "iid"
    if split.startswith("ood"):
        return "ood"
    raise ValueError(f"unknown split {split!r}: use 'iid', 'ood', 'train', 'test' or 'ood_<what>'")


class Universe:
    """The synthetic API universe: functions declared as data, one pure simulator, and task helpers."""

    def __init__(self, functions: list[ApiFunction]):
        self.functions: dict[str, ApiFunction] = {}
        for fn in functions:
            if fn.name in self.functions:
                raise ValueError(f"function {fn.name!r} is declared twice")
            if fn.split not in SPLITS:
                raise ValueError(f"{fn.name}: split must be 'iid' or 'ood', got {fn.split!r}")
            self.functions[fn.name] = fn
        self.domains: dict[str, tuple[str, ...]] = {}
        for fn in self.functions.values():
            self.domains[fn.domain] = self.domains.get(fn.domain, ()) + (fn.name,)

    @classmethod
    def from_modules(cls, modules=MODULES) -> "Universe":
        return cls([ApiFunction.from_dict(d, m.DOMAIN, m.SPLIT) for m in modules for d in m.FUNCTIONS])

    def __len__(self) -> int:
        return len(self.functions)

    def functions_for(self, split: str) -> list[ApiFunction]:
        """The functions of a split ('iid'/'ood', or an env split name); the two sets are disjoint."""
        vocab = split_vocab(split)
        return [fn for fn in self.functions.values() if fn.split == vocab]

    def tools(self, names) -> list[dict]:
        """OpenAI tool schemas for `names`, in order."""
        return [self.functions[n].schema() for n in names]

    # ---- the simulator ----------------------------------------------------------------------------------
    def call(self, name: str, arguments, world_seed: int = 0):
        """The simulated result of one call: a JSON-able dict (or {"error": ...}); never raises."""
        fn = self.functions.get(name) if isinstance(name, str) else None
        return simulator.call(fn, name, arguments, world_seed)

    @staticmethod
    def today(world_seed: int) -> str:
        """The world's current date (what "today" and tools without a date mean)."""
        return today(int(world_seed))

    # ---- writing tasks ---------------------------------------------------------------------------------------
    def sample_call(self, name: str, rng, with_optional: bool = False, vocab: str = "iid",
                    fixed: dict | None = None) -> requests.SampledCall:
        """(arguments, gold, surfaces) for one call of `name`, drawn from `rng` (an np.random.Generator);
        `fixed` pins top-level arguments (e.g. an earlier call's output) and the rest agree with them."""
        return requests.sample_call(self.functions[name], rng, with_optional, split_vocab(vocab), fixed)

    def render_request(self, name: str, surfaces: dict, rng) -> str:
        return requests.render_request(self.functions[name], surfaces, rng)

    def render_requests(self, calls: list[tuple[str, dict]], rng) -> str:
        """One message asking for several calls: [(function name, surfaces), ...]."""
        return requests.join_requests([self.render_request(n, s, rng) for n, s in calls], rng)

    # ---- typed graphs ---------------------------------------------------------------------------------------
    @cached_property
    def _dependency_edges(self) -> list[graph.DependencyEdge]:
        return graph.dependency_edges(self.functions)

    def dependency_edges(self, split: str | None = None) -> list[graph.DependencyEdge]:
        """(producer, output path, consumer, param path, entity type): an output that can feed a parameter."""
        keep = None if split is None else {fn.name for fn in self.functions_for(split)}
        return [e for e in self._dependency_edges if keep is None or (e.producer in keep and e.consumer in keep)]

    @cached_property
    def _sharing_edges(self) -> list[graph.SharingEdge]:
        return graph.sharing_edges(self.functions)

    def sharing_edges(self, split: str | None = None) -> list[graph.SharingEdge]:
        """(a, a_param, b, b_param, entity type): two functions taking a parameter of one entity type."""
        keep = None if split is None else {fn.name for fn in self.functions_for(split)}
        return [e for e in self._sharing_edges if keep is None or (e.a in keep and e.b in keep)]

    def condition_fields(self, split: str | None = None) -> list[graph.ConditionField]:
        """Result fields a task can branch on, with the values they take."""
        keep = None if split is None else {fn.name for fn in self.functions_for(split)}
        return [c for c in graph.condition_fields(self.functions) if keep is None or c.function in keep]
