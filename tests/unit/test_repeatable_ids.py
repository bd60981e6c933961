"""A request run again under its Idempotency-Key makes the events its first run made: same ids, in order."""

from __future__ import annotations

from datetime import UTC, datetime

from npcworld.contracts import Envelope, ObservationMade
from npcworld.ids import ids_repeatable_from

T0 = datetime(2023, 2, 13, 8, tzinfo=UTC)
MS = 1_700_000_000_000


def _events(n: int) -> list[Envelope]:
    return [Envelope.new(ObservationMade(description=f"bell {i}"), tenant_id="t", world_id="w", world_time=T0)
            for i in range(n)]


def test_the_same_seed_and_time_give_the_same_event_ids_in_the_same_order() -> None:
    with ids_repeatable_from("t\nkey-1\nPOST /p", MS):
        first = [e.event_id for e in _events(3)]
    with ids_repeatable_from("t\nkey-1\nPOST /p", MS):
        again = [e.event_id for e in _events(3)]
    assert first == again and len(set(first)) == 3
    assert all(i.version == 7 and int(i.int >> 80) == MS for i in first)  # still time-stamped UUIDv7s
    assert first == sorted(first)


def test_another_key_or_time_gives_other_ids_and_outside_the_block_ids_are_fresh() -> None:
    with ids_repeatable_from("t\nkey-1\nPOST /p", MS):
        one = _events(1)[0].event_id
    with ids_repeatable_from("t\nkey-2\nPOST /p", MS):
        other_key = _events(1)[0].event_id
    with ids_repeatable_from("t\nkey-1\nPOST /p", MS + 1):
        other_time = _events(1)[0].event_id
    assert len({one, other_key, other_time}) == 3
    assert _events(1)[0].event_id != _events(1)[0].event_id != one
