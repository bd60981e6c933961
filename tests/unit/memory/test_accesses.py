"""One MemoriesAccessed per NPC from noted accesses, whatever order the retrievals were noted in."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from services.memory.accesses import accessed_events
from services.memory.repository import NotedAccess

T0 = datetime(2023, 2, 13, 9, 0, tzinfo=UTC)
A, B = uuid.UUID(int=1), uuid.UUID(int=2)


def test_each_npc_gets_one_event_with_every_memory_the_latest_time_and_each_retrieval() -> None:
    noted = [  # as take_accesses returns them: NPC, cause, query, best first
        NotedAccess("abigail", A, "the party", "m9", T0),
        NotedAccess("eddy", None, "music", "m3", T0),
        NotedAccess("eddy", A, "Klaus", "m2", T0),
        NotedAccess("eddy", A, "Klaus", "m1", T0),
        NotedAccess("eddy", A, "the party", "m1", T0),
        NotedAccess("eddy", B, "hello there", "m1", T0 + timedelta(seconds=10)),
    ]
    events = accessed_events(noted, players={B})
    assert list(events) == ["abigail", "eddy"]
    eddy = events["eddy"]
    assert eddy.memory_ids == ("m1", "m2", "m3") and eddy.accessed_at == T0 + timedelta(seconds=10)
    assert [(r.cause, r.query, r.memory_ids) for r in eddy.retrievals] == [
        (None, "music", ("m3",)), (A, "Klaus", ("m2", "m1")), (A, "the party", ("m1",)),
        (B, None, ("m1",)),  # a player's line is the query: left out
    ]
    assert events["abigail"].memory_ids == ("m9",)


def test_nothing_noted_is_no_event() -> None:
    assert accessed_events([]) == {}
