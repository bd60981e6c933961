"""The importance accumulator: when a reflection is due (DESIGN.md "Reflection": summed importance > 150)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from npcworld.contracts import MemoryKind, Trust

__all__ = [
    "COUNTED_KINDS",
    "DEFAULT_THRESHOLD",
    "Accumulator",
    "Trigger",
    "add_importance",
    "complete_run",
    "fail_run",
    "run_key",
]

DEFAULT_THRESHOLD = 150
# What the NPC perceived or was told counts, as in the paper ("the latest events perceived") and its code
# (the trigger drops by each perceived event's and chat's poignancy). The NPC's own reflections, plans and
# seed memories do not: counting 15 new reflections of importance ~7 would start the next reflection on
# their own and feed a loop of reflections about reflections.
COUNTED_KINDS: frozenset[MemoryKind] = frozenset({"observation", "dialogue"})


@dataclass(frozen=True)
class Accumulator:
    """One NPC's importance since its last completed reflection and the run it is waiting for."""

    importance_sum: int = 0
    last_run: int = 0
    pending_run: int | None = None


@dataclass(frozen=True)
class Trigger:
    """Run number ``run`` is due: ``importance_sum`` exceeded ``threshold``."""

    run: int
    importance_sum: int
    threshold: int


def add_importance(
    acc: Accumulator,
    kind: MemoryKind,
    importance: int,
    *,
    threshold: int = DEFAULT_THRESHOLD,
    counted: frozenset[MemoryKind] = COUNTED_KINDS,
    trust: Trust = "high",
) -> tuple[Accumulator, Trigger | None]:
    """Add a new memory's importance; trigger the next run when the sum exceeds ``threshold``.

    The sum must be strictly greater than the threshold (DESIGN.md: "exceeds 150"). While a run is
    pending no second run is triggered; the sum keeps growing and is reset when the run completes.

    Args:
        acc: the NPC's accumulator before the memory.
        kind: the memory's kind; kinds outside ``counted`` leave the accumulator unchanged.
        importance: the memory's importance (1-10).
        threshold: the configured threshold (REFLECTION_THRESHOLD, default 150).
        counted: the memory kinds that count toward a reflection.
        trust: the memory's trust; a player's uncorroborated claim ("low") does not count, so claims, however
            often repeated, never start a reflection (docs/reflection.md "Claims").

    Returns:
        The new accumulator and the trigger, if this memory made a reflection due.
    """
    if kind not in counted or trust == "low":
        return acc, None
    total = acc.importance_sum + importance
    if acc.pending_run is None and total > threshold:
        run = acc.last_run + 1
        return Accumulator(total, run, run), Trigger(run, total, threshold)
    return replace(acc, importance_sum=total), None


def complete_run(acc: Accumulator, run: int) -> Accumulator:
    """The pending run completed: the sum starts again from 0 (the run saw the most recent memories).

    A completion of any other run (already handled) changes nothing.
    """
    if acc.pending_run != run:
        return acc
    return Accumulator(0, acc.last_run, None)


def fail_run(acc: Accumulator, run: int) -> Accumulator:
    """The pending run failed: the sum is kept, so the next counted memory triggers a new run."""
    if acc.pending_run != run:
        return acc
    return replace(acc, pending_run=None)


def run_key(tenant_id: str, world_id: str, npc_id: str, run: int) -> str:
    """The job key of a run, also the event-store stream that holds its one outcome event."""
    return f"reflection:{tenant_id}:{world_id}:{npc_id}:{run}"
