"""How the why-graph folds: which nodes make one box, and which boxes are shut at first.

A graph drawn whole stops being read past a short run (a 200-step run is a thousand
nodes, a conversation's earlier turns push this run off the page), so the drawing is
made of *groups*, each of which the page draws either open (its nodes, in a box) or
shut (one node standing for all of it, opened by a click):

- a **step**: an Iteration and everything made in it (its thought and arguments, its
  calls, what they returned, a sub-agent's whole run).  Shut at first: the step's box
  says what it thought and what each call returned or how it failed.
- a **turn**: one session of the conversation and what was made in it, when the graph
  holds several; the earlier turns are shut at first, the newest (this run) open.
- a **fold**: a stretch of steps of one run (the middle of a long run) or of earlier
  turns (all but the two before this run), shut at first and opened a chunk at a time:
  what is drawn at first does not grow with the length of the run or of the conversation.

Some nodes stay drawn inside a shut step (:data:`PINNED`): the root (the answer), and an
agent's goals, hypotheses and decisions, whose evidence edges say the most.

Each node belongs to the group of the node it was made in (:func:`holders`): the
activity it is ``part_of``, else the activity that generated it, else (an input such as
the question) the activity that used it.  Everything here works on node indexes; the
page's script does the drawing (``static/app.js``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "CHUNK",
    "FOLD_AT",
    "KEEP_TURNS",
    "PINNED",
    "Folding",
    "Group",
    "folding",
    "holders",
]

ACTIVITIES = frozenset(
    {"AgentSession", "Iteration", "ToolCall", "ModelCall", "Retrieval", "Span", "Activity"}
)
"""Node types drawn as activities (boxes); every other type is an entity (rounded)."""

PINNED = frozenset({"Goal", "Hypothesis", "Decision"})
"""Kinds of node drawn even inside a shut step (with the root)."""

FOLD_AT = 9
"""A run of more steps than this has its middle folded."""
KEEP_STEPS = 3
"""Steps left open at each end of a folded run: how it began, how it ended."""
KEEP_TURNS = 2
"""Earlier turns drawn as a box each; the older ones are in folds."""
CHUNK = 10
"""Steps (or turns) a click on a fold opens; the rest stay in a fold of their own."""


@dataclass(frozen=True)
class Group:
    """Nodes the page draws as one box, open or shut."""

    kind: str
    """``step``, ``turn`` or ``fold``."""
    head: int | None
    """The node that stands for the group when it is shut (the step's Iteration, the
    turn's session); ``None`` for a fold, which has a node of its own."""
    parent: int | None
    """The group it sits in (an index of :attr:`Folding.groups`)."""
    open: bool
    """Whether it is drawn open at first."""
    number: int = 0
    """A step's place in its run, a turn's in the conversation (from 1)."""
    of: int = 0
    """How many steps its run has, how many turns the conversation."""
    holds: tuple[int, ...] = ()
    """A fold's groups, the steps or turns it holds itself (not those of a fold in it)."""


@dataclass(frozen=True)
class Folding:
    holder: tuple[int | None, ...]
    """The node each node was made in (:func:`holders`)."""
    step: tuple[int | None, ...]
    """The Iteration each node was made in (itself, for one), else ``None``."""
    group: tuple[int | None, ...]
    """The innermost group of each node."""
    groups: tuple[Group, ...]
    order: tuple[tuple[int, int], ...]
    """(earlier, later) node pairs that keep time running down, drawn as nothing."""
    ends: Mapping[int, int]
    """Each answer (and the root, an entity): the last step of the run it ends.  Its
    edges to any node not in that step would cross the graph (see ``far`` in
    :mod:`~otel_prov.view._why_graph`)."""
    implied: frozenset[tuple[int, int]]
    """``partOf`` edges (step, session) not drawn: each step of a run after the first,
    part of the session its box already sits in (the first one's is drawn)."""


def holders(
    kinds: Sequence[str], part_of: Sequence[int | None], edges: Sequence[tuple[int, int, str]]
) -> list[int | None]:
    """The node each node was made in: the activity it is ``part_of``, else (an entity)
    the activity that generated it, else the activity that first used it (the question
    its session, a query its retrieval)."""
    holder = list(part_of)
    for source, target, relation in edges:
        entity = kinds[source] not in ACTIVITIES
        if holder[source] is None and (
            relation == "partOf" or (relation == "wasGeneratedBy" and entity)
        ):
            holder[source] = target
    for source, target, relation in edges:
        entity = kinds[target] not in ACTIVITIES and holder[target] is None
        if relation == "used" and entity and kinds[source] in ACTIVITIES and source != target:
            holder[target] = source
    return holder


def _first_up(holder: Sequence[int | None], node: int, heads: Mapping[int, int]) -> int | None:
    """The group headed by ``node`` or the nearest node it was made in that heads one."""
    seen: set[int] = set()
    at: int | None = node
    while at is not None and at not in seen:
        if at in heads:
            return heads[at]
        seen.add(at)
        at = holder[at]
    return None


def _top(holder: Sequence[int | None], node: int) -> int:
    """The outermost node ``node`` was made in (itself when none)."""
    seen = {node}
    while (above := holder[node]) is not None and above not in seen:
        seen.add(above)
        node = above
    return node


def folding(
    kinds: Sequence[str],
    part_of: Sequence[int | None],
    edges: Sequence[tuple[int, int, str]],
    root: int | None,
) -> Folding:
    """The groups of a graph of nodes of ``kinds`` (in time order, the root first),
    ``part_of`` (each node's ``part_of`` index) and ``edges`` (subject, object, relation)."""
    holder = holders(kinds, part_of, edges)
    boxes = [i for i, kind in enumerate(kinds) if kind == "Iteration"]
    itself = {box: box for box in boxes}
    step = [_first_up(holder, node, itself) for node in range(len(kinds))]
    runs: dict[int | None, list[int]] = {}
    for box in boxes:
        runs.setdefault(holder[box], []).append(box)
    sessions = [i for i, k in enumerate(kinds) if k == "AgentSession" and holder[i] is None]
    current = None if root is None else _top(holder, root)
    turns = sorted(sessions, key=lambda s: (s == current, s)) if len(sessions) > 1 else []

    groups: list[Group] = []
    heads: dict[int, int] = {}  # head node -> its group

    def add(group: Group) -> int:
        groups.append(group)
        if group.head is not None:
            heads[group.head] = len(groups) - 1
        return len(groups) - 1

    turn_parent = _fold_chain(turns[:-1][:-KEEP_TURNS], groups, parent=None, newest_first=True)
    for number, session in enumerate(turns, 1):
        add(
            Group(
                "turn", session, turn_parent.get(session), session == turns[-1], number, len(turns)
            )
        )
    _hold(groups, turn_parent)
    # Steps outermost first, so that a step's parent exists when it is added.
    depth = {box: _depth(holder, box, set(boxes)) for box in boxes}
    for made_in, run in sorted(runs.items(), key=lambda item: min(depth[b] for b in item[1])):
        around = None if made_in is None else _first_up(holder, made_in, heads)
        middle = run[KEEP_STEPS:-KEEP_STEPS] if len(run) > FOLD_AT else []
        placed = _fold_chain(middle, groups, parent=around, newest_first=False)
        for number, box in enumerate(run, 1):
            add(Group("step", box, placed.get(box, around), False, number, len(run)))
        _hold(groups, placed)
    group = [_first_up(holder, node, heads) for node in range(len(kinds))]
    ends: dict[int, int] = {}
    for node, kind in enumerate(kinds):
        if kind not in ACTIVITIES and (kind == "Answer" or node == root):
            run = runs.get(holder[node], [])
            last = step[node] if step[node] is not None else run[-1] if run else None
            if last is not None:
                ends[node] = last
    implied = frozenset(
        (box, made_in) for made_in, run in runs.items() if made_in is not None for box in run[1:]
    )
    return Folding(
        holder=tuple(holder),
        step=tuple(step),
        group=tuple(group),
        groups=tuple(groups),
        order=tuple(
            _order(runs, holder, step, root, ends) + _turn_order(turns, kinds, holder, step, runs)
        ),
        ends=ends,
        implied=implied,
    )


def _depth(holder: Sequence[int | None], node: int, boxes: set[int]) -> int:
    """How many steps ``node`` sits in (a sub-agent's step in its caller's: 1)."""
    count, seen, at = 0, {node}, holder[node]
    while at is not None and at not in seen:
        count += at in boxes
        seen.add(at)
        at = holder[at]
    return count


def _fold_chain(
    folded: Sequence[int], groups: list[Group], *, parent: int | None, newest_first: bool
) -> dict[int, int]:
    """Folds for ``folded`` (heads of steps or turns, in time order), a :data:`CHUNK` to
    a fold, each fold in the one before it: opening one opens a chunk and leaves the rest
    shut.  Steps open from the first of the stretch, turns from the newest (the one next
    to this run).  Returns head -> the fold it sits in."""
    ordered = list(reversed(folded)) if newest_first else list(folded)
    placed: dict[int, int] = {}
    for start in range(0, len(ordered), CHUNK):
        groups.append(Group("fold", None, parent, False))
        parent = len(groups) - 1
        placed.update((head, parent) for head in ordered[start : start + CHUNK])
    return placed


def _hold(groups: list[Group], placed: Mapping[int, int]) -> None:
    """Fill in each fold's :attr:`Group.holds`: the groups whose head it holds."""
    for fold in set(placed.values()):
        held = tuple(
            i for i, g in enumerate(groups) if g.head is not None and placed.get(g.head) == fold
        )
        old = groups[fold]
        groups[fold] = Group(old.kind, old.head, old.parent, old.open, holds=held)


def _order(
    runs: Mapping[int | None, list[int]],
    holder: Sequence[int | None],
    step: Sequence[int | None],
    root: int | None,
    ends: Mapping[int, int],
) -> list[tuple[int, int]]:
    """(earlier, later) pairs that keep time running down: each run of steps made in the
    same activity (a session's), in time order, below that activity, each step's parts
    above the next step, the last step's above the answers of that activity and above
    the ``root`` when the run is of the root's turn, unless the root is in a step itself
    or is the activity the steps were made in (a session that failed before answering is
    where its steps start, not where they end)."""
    parts: dict[int, list[int]] = {}
    for node, inside in enumerate(step):
        if inside is not None:
            parts.setdefault(inside, []).append(node)
    pairs: list[tuple[int, int]] = []
    for made_in, run in runs.items():
        if made_in is not None:
            pairs.append((made_in, run[0]))
        for earlier, later in itertools.pairwise(run):
            pairs.extend((part, later) for part in parts[earlier])
        below = {end for end in ends if holder[end] == made_in and step[end] is None}
        if (
            root is not None
            and step[root] is None
            and root != made_in
            and (made_in is None or _top(holder, made_in) == _top(holder, root))
        ):
            below.add(root)
        pairs.extend((part, end) for end in sorted(below) for part in parts[run[-1]] if part != end)
    return pairs


def _turn_order(
    turns: Sequence[int],
    kinds: Sequence[str],
    holder: Sequence[int | None],
    step: Sequence[int | None],
    runs: Mapping[int | None, list[int]],
) -> list[tuple[int, int]]:
    """Each turn below the one before it: what ended the earlier turn (its answer, else
    its last step's parts, else its session) above where the later one starts (its
    question, else its session).  Without these the question of a turn sat beside the
    turn before it, which its session follows."""
    made: dict[tuple[int | None, str], int] = {}
    for node, kind in enumerate(kinds):
        made.setdefault((holder[node], kind), node)
    pairs: list[tuple[int, int]] = []
    for earlier, later in itertools.pairwise(turns):
        ends = [made[(earlier, "Answer")]] if (earlier, "Answer") in made else []
        if not ends and runs.get(earlier):
            last = runs[earlier][-1]
            ends = [i for i, inside in enumerate(step) if inside == last]
        begins = made.get((later, "Question"), later)
        pairs.extend((end, begins) for end in ends or [earlier])
    return pairs
