"""Workflows in WorfBench's text format: parse them exactly as its evaluator does, and write them.

The format (the assistant turn of every WorfBench record)::

    Node:
    1: Search for the item.
    2: Open the cheapest result.
    Edge: (START,1) (1,2) (2,END)

Indexing, as in WorfBench's evaluator: the steps are 1..n in the order the node lines appear in the text, 0 is
START and n+1 is END; an edge is a pair of such indices. `Workflow.labels()` is the evaluator's node list
("START", steps..., "END"), so an index is a position in it.

Parsing rules (WorfBench `node_eval.py`, `workflow_to_graph_list`), kept exactly because the official scores
depend on them; each is a rule on agent text, so none raises:

* The text must contain "Node" (case-sensitive, anywhere), else it is unparsable.
* Steps are every match of ``\\d+[:.] (.+)`` anywhere in the text (one per line at most, the rest of the line,
  stripped); the number written before a step is ignored: steps are numbered by order of appearance, so
  "3: a" followed by "1: b" gives step 1 = "a". Prose lines such as "1. **Plan**" count as steps too, and a
  last step mentioning "Finish" is kept (the evaluator's graph parser does not drop it).
* Edges are every match of ``\\(\\s*(\\d+|START)\\s*,\\s*(\\d+|END)\\s*\\)`` anywhere in the text; START is allowed
  only first and END only second; END means n+1. Duplicates, self-loops, cycles and indices outside 0..n+1
  are kept as written (the metric decides what they are worth). No edge at all: unparsable.
* An index too long for `int` (over 4300 digits on CPython >= 3.10.7) makes the evaluator's parser fail:
  unparsable.

An unparsable text gives None; WorfBench then skips the record, which counts as zero in its averages.

    >>> wf = parse_workflow("Node:\\n1: Search for the item.\\n2: Open the cheapest result.\\nEdge: (START,1) (1,2) (2,END)")
    >>> wf.nodes, wf.edges
    (['Search for the item.', 'Open the cheapest result.'], [(0, 1), (1, 2), (2, 3)])
    >>> print(format_workflow(wf))
    Node:
    1: Search for the item.
    2: Open the cheapest result.
    Edge: (START,1) (1,2) (2,END)
    >>> parse_workflow("1: no header\\nEdge: (START,1)") is None
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

START, END = "START", "END"
# WorfBench's patterns. The look-behind only skips start positions inside a run of digits, which can never
# begin the leftmost match (the run's first digit would), so the matches are the same while a long run of
# digits no longer costs quadratic time.
NODE_RE = re.compile(r"(?<!\d)\d+[:.] (.+)")
EDGE_RE = re.compile(r"\(\s*(\d+|START)\s*,\s*(\d+|END)\s*\)")


@dataclass
class Workflow:
    """A workflow: `nodes` are the step texts (steps 1..n); `edges` are (u, v) index pairs, 0 = START,
    n+1 = END, kept as written (see the module docstring)."""

    nodes: list[str]
    edges: list[tuple[int, int]] = field(default_factory=list)

    def __post_init__(self):
        self.nodes = [str(node) for node in self.nodes]
        self.edges = [(int(u), int(v)) for u, v in self.edges]

    @property
    def n(self) -> int:
        return len(self.nodes)

    @property
    def end(self) -> int:
        """The index of END (n + 1)."""
        return len(self.nodes) + 1

    def labels(self) -> list[str]:
        """The evaluator's node list: START, the steps, END; an edge index is a position in it."""
        return [START, *self.nodes, END]

    def valid_edges(self) -> list[tuple[int, int]]:
        """The edges inside 0..n+1, without self-loops or repeats, in written order."""
        top = len(self.nodes) + 1
        return [e for e in dict.fromkeys(self.edges) if 0 <= e[0] <= top and 0 <= e[1] <= top and e[0] != e[1]]

    def key(self) -> tuple:
        """A hashable identity (for caches)."""
        return tuple(self.nodes), tuple(self.edges)

    def to_text(self) -> str:
        return format_workflow(self)


def parse_workflow(text) -> Workflow | None:
    """Parse WorfBench's text format exactly as its evaluator does; None when it would find no workflow.
    Never raises (any input, any size)."""
    if isinstance(text, Workflow):
        return text
    if not isinstance(text, str) or "Node" not in text:
        return None
    nodes = [match.strip() for match in NODE_RE.findall(text)]
    pairs = EDGE_RE.findall(text)
    if not pairs:
        return None
    end = str(len(nodes) + 1)
    try:
        edges = [(int("0" if u == START else u), int(end if v == END else v)) for u, v in pairs]
    except ValueError:  # an index past CPython's int-from-string digit limit: the evaluator's parser fails too
        return None
    return Workflow(nodes, edges)


def format_workflow(wf: Workflow) -> str:
    """WorfBench's text format. Node texts are written on one line (inner line breaks become spaces), so
    `parse_workflow(format_workflow(wf)) == wf` whenever the node texts are non-empty stripped single lines that hold no
    edge-like "(i,j)" and the workflow has an edge. Index 0 as a source is written START and n+1 as a target
    END; any other index is written as its number, which parses back to itself."""
    end = len(wf.nodes) + 1
    lines = ["Node:"]
    lines += [f"{i}: {' '.join(str(node).splitlines())}" for i, node in enumerate(wf.nodes, 1)]
    pairs = [f"({START if u == 0 else u},{END if v == end else v})" for u, v in wf.edges]
    lines.append("Edge: " + " ".join(pairs))
    return "\n".join(lines)
