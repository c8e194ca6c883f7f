"""MagicAgent environments. Importing this package registers every `magic/` id with Gymnasium.

    >>> import gymnasium, magic_envs
    >>> env = gymnasium.make("magic/Calendar-v0")
    >>> observation, info = env.reset(seed=0)
    >>> _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
    >>> reward, terminated, info["success"]
    (1.0, True, True)

`gymnasium.make("magic_envs:magic/Calendar-v0")` works without importing this package first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gymnasium.envs.registration import register, registry


@dataclass(frozen=True)
class EnvEntry:
    """One row of the table of contents: what `magic list` shows and Gymnasium registers."""

    entry_point: str
    family: str
    summary: str
    max_episode_steps: int
    offline: dict = field(default_factory=dict)  # make kwargs that run it with no server (tests, sweeps)


ENVS: dict[str, EnvEntry] = {
    "magic/Calendar-v0": EnvEntry(
        "magic_envs.scheduling.calendar:CalendarEnv", "scheduling",
        "Find the meeting slot that fits every participant's calendar and preferences (NATURAL PLAN).", 3),
    "magic/Meeting-v0": EnvEntry(
        "magic_envs.scheduling.meeting:MeetingEnv", "scheduling",
        "Plan a day of travel to meet as many friends as possible within their windows (NATURAL PLAN).", 3),
    "magic/Trip-v0": EnvEntry(
        "magic_envs.scheduling.trip:TripEnv", "scheduling",
        "Plan a multi-city trip with fixed stays, events and direct flights only (NATURAL PLAN).", 3),
    "magic/ToolCall-v0": EnvEntry(
        "magic_envs.tool_planning.toolcall:ToolCallEnv", "tool_planning",
        "Answer a request with the right function calls, or none (BFCL categories, synthetic API universe).", 1),
    "magic/ToolPlan-v0": EnvEntry(
        "magic_envs.tool_planning.toolplan:ToolPlanEnv", "tool_planning",
        "Multi-turn tool use: dependent calls, conditions on results, follow-ups reusing context (MagicEval-Tool).",
        24),
    "magic/BFCL-v0": EnvEntry(
        "magic_envs.tool_planning.bfcl:BFCLEnv", "tool_planning",
        "The real BFCL v3 single-turn AST entries from the bfcl-eval package, scored as BFCL does.", 1),
    "magic/Decompose-v0": EnvEntry(
        "magic_envs.decomposition.decompose:DecomposeEnv", "decomposition",
        "Decompose a request into a workflow graph over the API universe (Node/Edge), scored like WorfBench.", 3),
    "magic/WorfBench-v0": EnvEntry(
        "magic_envs.decomposition.worfbench:WorfBenchEnv", "decomposition",
        "Decompose a real WorfBench task into a workflow graph, scored with WorFEval's f1_graph "
        "(gold files from MAGIC_WORFBENCH_DIR).", 3),
    "magic/Retail-v0": EnvEntry(
        "magic_envs.procedures.retail:RetailEnv", "procedures",
        "Serve a store's customer by its policy: authenticate, confirm, cancel/modify/return/exchange, refuse or "
        "transfer (tau2-bench retail, generated).", 40),
    "magic/Airline-v0": EnvEntry(
        "magic_envs.procedures.airline:AirlineEnv", "procedures",
        "Serve an airline customer by a written policy: book, change, cancel, refuse or transfer (tau2-bench "
        "airline, generated).", 50),
    "magic/Tau2-v0": EnvEntry(
        "magic_envs.procedures.tau2:Tau2Env", "procedures",
        "tau2-bench's own retail and airline tasks on our tools, tau2's reward (data from the tau2-*-mcp-eval "
        "packages; customer played by a model).", 60, offline={"user": "scripted"}),
    "magic/BFCLMultiTurn-v0": EnvEntry(
        "magic_envs.tool_execution.bfcl_multi_turn:BFCLMultiTurnEnv", "tool_execution",
        "BFCL v3 multi-turn entries (base, miss_func, miss_param, long_context) on bfcl-eval's own stateful "
        "backends, scored by backend state and call results after each turn as BFCL does.", 168),
    "magic/Workspace-v0": EnvEntry(
        "magic_envs.tool_execution.workspace:WorkspaceEnv", "tool_execution",
        "Long-horizon tool use in a stateful workspace (files, mail, calendar, contacts, notes, shop, bank): "
        "15-50 dependent calls, scored on the whole final world against the gold one.", 100),
    "magic/ALFWorld-v0": EnvEntry(
        "magic_envs.alfworld.alfworld_env:ALFWorldEnv", "alfworld",
        "ALFWorld's six household task types in text, on its real engine (TextWorld PDDL + fast-downward), "
        "generated offline in ALFRED's rooms or from ALFWorld's game files (needs alfworld).", 50),
}

for _env_id, _entry in ENVS.items():
    if _env_id not in registry:
        register(id=_env_id, entry_point=_entry.entry_point, max_episode_steps=_entry.max_episode_steps)

__all__ = ["ENVS", "EnvEntry"]
