"""The ALFWorld engine: TextWorld's PDDL logic and text grammar over fast-downward, as ALFWorld plays it.

A game is ALFWorld's `game.tw-pddl` content: {"pddl_domain", "grammar", "pddl_problem"}. `Engine` takes the
steps of TextWorld's `PddlEnv` (fast-downward's translation of domain + problem, its successor generator for
the applicable actions, the grammar for every text) and names entities as ALFWorld's `AlfredDemangler` does,
so its observations and admissible commands are the ones ALFWorld shows (tests/test_alfworld.py checks this
against PddlEnv + AlfredDemangler step by step). It differs in cost only:

* one translation per game, cached by content (PddlEnv translates twice per load and twice per reset);
* a command's text is derived once per game and kept: in ALFWorld's grammar a command names only its
  arguments and the receptacles at a location, which never change (a plain template such as
  "take {o} from {r}" is filled in directly: the grammar would only put the names in its slots);
* admissible commands are listed only when asked for; a command is matched against the actions whose
  template starts like it, so a step derives no text it does not need;
* plans come from the library's planner on the part of the state the goal depends on (`planner`), which
  takes milliseconds where the whole room takes seconds to minutes.

The engine blocks (a new game translates in a few tenths of a second, a plan takes a few hundredths more):
callers that share an event loop run it in a thread pool (engine calls take turns within a process, see
`ENGINE_LOCK`) or, to run games in parallel, a process pool. It is picklable: it keeps the game and the
commands carried out since reset, and a copy rebuilds the library state by replaying them.
"""

from __future__ import annotations

import functools
import weakref
from collections import Counter

from magic_envs.alfworld.loading import (ENGINE_LOCK, PLAIN_TEMPLATE, alfworld_names, command_cache, compile_game,
                                         game_logic, literal_prefix, mentioned_parameters)

_FREE_LIBRARIES: list = []  # loaded copies of libdownward, reused: each holds one game's state at a time
_FIRST_PLANS: dict[tuple, list[str] | None] = {}  # (domain, problem, grammar) -> plan from the initial state


def clear_caches() -> None:
    """Forget every translation, command text and first plan (benchmarks time games new to the process)."""
    compile_game.cache_clear()
    command_cache.cache_clear()
    _FIRST_PLANS.clear()


def _locked(method):
    @functools.wraps(method)
    def call(self, *args, **kwargs):
        with ENGINE_LOCK:
            return method(self, *args, **kwargs)
    return call


class Engine:
    """One ALFWorld game, played command by command (see the module docstring)."""

    def __init__(self, game: dict):
        for key in ("pddl_domain", "grammar", "pddl_problem"):
            if not isinstance(game.get(key), str):
                raise ValueError(f"an ALFWorld game needs a {key!r} string")
        self.game = game
        self.history: list[str] = []
        self._live = None

    # ---- the game --------------------------------------------------------------------------------------
    @_locked
    def reset(self) -> str:
        """Start over; returns ALFWorld's intro (the room and the task)."""
        self.history = []
        self._live = None
        return self.live.intro

    @_locked
    def step(self, command: str) -> tuple[str, bool]:
        """(feedback, valid). An inadmissible command changes nothing and reads "Nothing happens."."""
        feedback, valid = self.live.step(command)
        if valid:
            self.history.append(command)
        return feedback, valid

    @_locked
    def admissible(self) -> list[str]:
        return self.live.admissible()

    @_locked
    def won(self) -> bool:
        return self.live.won()

    @property
    @_locked
    def moves(self) -> int:
        return self.live.moves

    @_locked
    def plan(self) -> list[str] | None:
        """The planner's commands from the current state to the goal (None: the goal is out of reach)."""
        if self.history:
            return self.live.plan()
        key = (self.game["pddl_domain"], self.game["pddl_problem"], self.game["grammar"])
        if key not in _FIRST_PLANS:  # a game's first plan is asked for at every reset of it
            if len(_FIRST_PLANS) >= 256:
                _FIRST_PLANS.pop(next(iter(_FIRST_PLANS)))
            _FIRST_PLANS[key] = self.live.plan()
        plan = _FIRST_PLANS[key]
        return None if plan is None else list(plan)

    # ---- rebuilding ------------------------------------------------------------------------------------
    @property
    def live(self) -> _Live:
        if self._live is None:
            live = _Live(self.game)
            for command in self.history:
                live.step(command, narrate=False)
            self._live = live
        return self._live

    def __getstate__(self):
        return {"game": self.game, "history": list(self.history)}

    def __setstate__(self, state):
        self.game, self.history, self._live = state["game"], state["history"], None


class _Live:
    """The library state of one game in progress (not picklable: it holds a loaded library)."""

    def __init__(self, game: dict):
        import fast_downward
        from textworld.envs.pddl.logic import Atom, PddlState
        from textworld.generator.game import EntityInfo
        from textworld.logic import Type

        self.game = game
        self.compiled = compile_game(game["pddl_domain"], game["pddl_problem"])
        self.logic = game_logic(game["grammar"])
        for name, supertypes in self.compiled.types:  # as PddlState registers them
            try:
                self.logic.types.add(Type(name, list(supertypes)))
            except ValueError:  # already known
                pass
        self.lib = _FREE_LIBRARIES.pop() if _FREE_LIBRARIES else fast_downward.load_lib()
        weakref.finalize(self, _FREE_LIBRARIES.append, self.lib)
        self.lib.load_sas(self.compiled.sas)
        # PddlState's fact store and `apply`, filled from the cached translation instead of translating anew.
        state = object.__new__(PddlState)
        textworld_state_init(state, self.logic, self.compiled.facts)
        state.downward_lib, state.name2type = self.lib, self.compiled.name2type
        size = self.lib.get_state_size()
        atoms = (Atom * size)()
        self.lib.get_state(atoms)
        state.add_facts(f for f in (a.get_fact(state.name2type) for a in atoms) if not f.is_negation)
        self.state = state
        ids = {v.name for fact in state.facts for v in fact.arguments}
        names = alfworld_names(ids)
        self.infos = {}
        for i in ids:
            info = EntityInfo(i, self.compiled.name2type.get(i, ""))
            info.name, info.definite, info.indefinite = names[i], "the", "a"
            self.infos[i] = info
        self.commands = command_cache(game["pddl_domain"], game["pddl_problem"], game["grammar"])
        self.moves = 0
        self._operators = None
        self.intro = self.derive("#intro#", ())

    def derive(self, rule: str, arguments) -> str:
        """The grammar's text for `rule`, with (argument, (parameter, type)) pairs bound as PddlEnv binds them."""
        from textworld.logic import Placeholder, Variable

        params = {Placeholder(ph, type_name): Variable(arg, type_name) for arg, (ph, type_name) in arguments}
        context = {"state": self.state, "facts": list(self.state.facts), "entity_infos": self.infos,
                   "variables": {ph.name: self.infos[var.name] for ph, var in params.items()}, "mapping": params}
        return self.logic.grammar.derive(rule, context)

    def command(self, operator_name: str) -> str:
        action, *args = operator_name.split()
        template = self.logic.actions[action].template
        key = (action, *(args[i] for i in mentioned_parameters(template, self.compiled.parameters[action])))
        text = self.commands.get(key)
        if text is None:
            params = self.compiled.parameters[action]
            if PLAIN_TEMPLATE.fullmatch(template):  # "take {o} from {r}": the grammar would only put names in the slots
                text = template.format(**{ph: self.infos[arg].name for arg, (ph, _) in zip(args, params)})
            else:
                derived = self.derive(template, zip(args, params))
                text = derived.format(**{k: info.name for k, info in self.infos.items()})
            self.commands[key] = text
        return text

    def operators(self) -> list:
        """The library's applicable operators in the current state, in its order."""
        if self._operators is None:
            import fast_downward

            count = self.lib.get_applicable_operators_count()
            found = (fast_downward.Operator * count)()
            self.lib.get_applicable_operators(found)
            self._operators = list(found)
        return self._operators

    def admissible(self) -> list[str]:
        return sorted({self.command(op.name) for op in self.operators()})

    def find(self, command: str):
        """The first applicable operator whose command is `command` (PddlEnv's choice among equal texts).
        Texts are derived only for actions whose template starts like the command."""
        for op in self.operators():
            action = op.name.split(" ", 1)[0]
            if command.startswith(literal_prefix(self.logic.actions[action].template)):
                if self.command(op.name) == command:
                    return op
        return None

    def step(self, command: str, narrate: bool = True) -> tuple[str, bool]:
        op = self.find(command.strip())
        if op is None:
            return "Nothing happens.", False
        action, *args = op.name.split()
        self.state._operators = {op.id: op}
        self.state.apply(op)  # PddlState.apply: the library applies the operator, the fact store follows
        self._operators = None
        self.moves += 1
        if not narrate:  # replaying a pickled episode: only the state matters
            return "", True
        return self.derive(self.logic.actions[action].feedback_rule, zip(args, self.compiled.parameters[action])), True

    def won(self) -> bool:
        return bool(self.lib.check_goal())

    def plan(self) -> list[str] | None:
        from magic_envs.alfworld import planner

        return planner.plan(self)


def textworld_state_init(state, logic, facts) -> None:
    """textworld.logic.State's constructor body, minus its check that `logic` is a non-PDDL GameLogic."""
    from collections import defaultdict

    state._logic = logic
    state._facts = defaultdict(set)
    state._vars_by_name = {}
    state._vars_by_type = defaultdict(set)
    state._var_counts = Counter()
    state.add_facts(facts)
