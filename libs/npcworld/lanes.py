"""Lanes: which traffic an event belongs to, so a world's own steps never queue behind player traffic.

Every event belongs to the lane of the request or tick that started its chain (its ``correlation_id``'s
root event), so a cause and all its reactions share one lane:

- ``interactive``: a player's chat line (``PlayerSpoke``) and everything it causes; someone waits for it.
- ``world``: the world's own life (clock ticks and their cascades, set-up, moves); the default.
- ``ingest``: perceptions a studio posts (``ObservationMade`` with source ``studio``) and what they cause;
  the bulk of client traffic, taken as capacity allows.

The relay sends each event's lane as the ``lane`` Kafka header; the consumer loop takes a poll's
interactive events first, then the world's, and works ingest events off in small chunks while nothing
else waits (``npcworld.messaging.lanes``). A stepped clock waits only for the world lane (and what it has
stored before its step began of the world's own), so steady player traffic never holds a clock back.
For the same reason a handler does not hold player traffic for a stepped world's step end (memory's held
writes, dialogue's queued conversations): ``is_player_traffic`` tells it what the loop is handling.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Literal

__all__ = ["LANES", "LANE_HEADER", "WRITER_HEADER", "Lane", "WorldFirst", "current_lane", "handling_lane",
           "is_player_traffic", "lane_of_root_sql", "player_traffic_sql", "rank"]

LANE_HEADER = "X-Npcworld-Lane"  # sent with internal API calls made while handling an event
# Sent (the consumer's name) with an internal API call made inside a consumer's open transaction: a writer
# waits for the answer, holding its locks (planning holds the NPC's), so it is never made to wait its turn.
WRITER_HEADER = "X-Npcworld-Writer"

Lane = Literal["interactive", "world", "ingest"]
LANES: tuple[Lane, ...] = ("interactive", "world", "ingest")  # in the order a consumer takes them
_RANKS: dict[str, int] = {lane: i for i, lane in enumerate(LANES)}

_ROOT_LANE = """CASE WHEN {root}.type = 'PlayerSpoke' THEN 'interactive'
     WHEN {root}.type = 'ObservationMade' AND {root}.payload->>'source' = 'studio' THEN 'ingest'
     ELSE 'world' END"""


def lane_of_root_sql(event: str) -> str:
    """A SQL expression for the lane of the events row aliased ``event`` (from its chain's root event)."""
    root = f"{event}_root"
    return (
        f"coalesce((SELECT {_ROOT_LANE.format(root=root)} FROM events {root}"
        f" WHERE {root}.event_id = {event}.correlation_id), 'world')"
    )


def player_traffic_sql(event: str) -> str:
    """A SQL condition: the events row aliased ``event`` belongs to player traffic (not the world lane)."""
    return f"{lane_of_root_sql(event)} <> 'world'"


def rank(lane: str | None) -> int:
    """The order a consumer takes a lane in (unknown or missing: the world's)."""
    return _RANKS.get(lane or "world", _RANKS["world"])


_current: ContextVar[str | None] = ContextVar("npcworld_lane", default=None)


@contextlib.contextmanager
def handling_lane(lane: str | None) -> Iterator[None]:
    """The consumer loop handles an event of ``lane`` (None: unknown, taken as the world's) meanwhile."""
    token = _current.set(lane)
    try:
        yield
    finally:
        _current.reset(token)


def current_lane() -> str | None:
    """The lane of the event being handled (None outside the loop)."""
    return _current.get()


def is_player_traffic() -> bool:
    """Whether the event being handled belongs to player traffic (False outside the loop, or unknown)."""
    return rank(_current.get()) != rank("world")


class WorldFirst:
    """Priority for work a process does outside its consumer loop: the memory service's API waits, before
    serving a request made for ingest traffic, while the loop of the same process has the world's (or a
    chat's) events to handle, for at most ``patience`` seconds; then it serves it anyway."""

    def __init__(self, patience: float = 5.0) -> None:
        self.patience = patience
        self._free = asyncio.Event()
        self._free.set()

    def busy(self, busy: bool) -> None:
        """The loop has (True) or has no longer (False) events ahead of ingest to handle."""
        if busy:
            self._free.clear()
        else:
            self._free.set()

    async def turn(self, lane: str | None, *, writer_waits: bool = False) -> None:
        """Return when a request for ``lane`` may be served: at once when ``writer_waits`` (the request was
        made inside a consumer's transaction; ``WRITER_HEADER``), else as the docstring of the class says."""
        if rank(lane) <= rank("world") or writer_waits or self._free.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._free.wait(), self.patience)
