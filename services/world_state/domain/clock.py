"""The world clock: when the next step is due and what it advances to (pure; wall time is an argument)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from npcworld.contracts import ClockChanged, WorldTicked

__all__ = ["CATCH_UP_STEPS", "ClockState", "apply_change", "in_focus", "is_due", "next_tick"]

# A real-time clock fewer intervals than this behind its schedule makes up the steps it missed, one after the
# other; further behind, it starts a new schedule.
CATCH_UP_STEPS = 6


@dataclass(frozen=True)
class ClockState:
    """A world's clock. ``speed`` is world seconds per wall second; None = stepped (as fast as digested)."""

    tenant_id: str
    world_id: str
    world_time: datetime
    step: int
    step_seconds: float
    speed: float | None
    paused: bool
    last_tick_wall: float  # real time: when its last step was due (wall seconds); stepped: when it was made
    until: datetime | None = None
    focus: tuple[str, ...] | None = None  # level of detail (ClockChanged.focus); None: all in full detail


def is_due(clock: ClockState, wall_now: float) -> bool:
    """A running clock ticks once ``step_seconds / speed`` wall seconds have passed since its last step was
    due (not since it was made: a tick taken late does not push every later one back).

    A stepped clock is always due; the ticker gates it on the pipeline having digested the last step.
    A clock with ``until`` stops once its world time reaches it.
    """
    if clock.paused or (clock.until is not None and clock.world_time >= clock.until):
        return False
    if clock.speed is None:
        return True
    return wall_now - clock.last_tick_wall >= clock.step_seconds / clock.speed


def next_tick(
    clock: ClockState, wall_now: float, places: Mapping[str, str | None] | None = None
) -> tuple[ClockState, WorldTicked]:
    """Advance one step: the new clock state and the event announcing it. With a focus (level of detail),
    the event names the NPCs in full detail: those whose place (``places``: npc → path) is in focus.

    A real-time step keeps to its schedule: it is due one interval after the last step was due, so the
    ticker's lateness does not accrue, and a ticker held up for a few intervals makes the steps due meanwhile
    one after the other. A clock ``CATCH_UP_STEPS`` intervals behind or more (a run stopped, a machine
    suspended) starts a new schedule now instead of a burst. The event carries the due time, so a rebuilt
    clock keeps the same schedule."""
    due = _due_at(clock, wall_now)
    advanced = replace(
        clock,
        step=clock.step + 1,
        last_tick_wall=wall_now if due is None else due,
        world_time=clock.world_time + timedelta(seconds=clock.step_seconds),
    )
    detail = None if clock.focus is None else tuple(
        sorted(npc for npc, path in (places or {}).items() if in_focus(path, clock.focus))
    )
    ticked = WorldTicked(step=advanced.step, step_seconds=clock.step_seconds, detail=detail, due_at=due)
    return advanced, ticked


def _due_at(clock: ClockState, wall_now: float) -> float | None:
    """When a real-time clock's next step was due (None for a stepped clock, which has no schedule)."""
    if clock.speed is None:
        return None
    interval = clock.step_seconds / clock.speed
    due = clock.last_tick_wall + interval
    return due if wall_now - due < CATCH_UP_STEPS * interval else wall_now


def in_focus(path: str | None, focus: Sequence[str]) -> bool:
    """Is ``path`` one of these places or inside one (``world:sector`` holds ``world:sector:arena``)? The
    clock's focus and a rule's places are read the same way."""
    return path is not None and any(path == f or path.startswith(f + ":") for f in focus)


def apply_change(clock: ClockState, change: ClockChanged, wall_now: float) -> ClockState:
    """Pause, resume or re-pace; the first step after a change waits a full interval."""
    return replace(
        clock,
        paused=change.paused,
        speed=change.speed,
        step_seconds=change.step_seconds,
        last_tick_wall=wall_now,
        until=change.until,
        focus=change.focus,
    )
