"""The per-key token bucket and the opaque cursors behave as a client would observe them."""

from __future__ import annotations

import pytest

from npcworld.errors import ValidationError
from services.gateway.domain import take
from services.gateway.pagination import decode_cursor, encode_cursor


def test_a_burst_passes_then_the_next_request_waits_one_refill_interval() -> None:
    bucket, waits = None, []
    for _ in range(4):
        bucket, wait = take(bucket, now=100.0, rate=2.0, burst=3)
        waits.append(wait)
    assert waits[:3] == [0.0, 0.0, 0.0]
    assert waits[3] == pytest.approx(0.5)


def test_tokens_refill_with_time_but_never_beyond_the_burst() -> None:
    bucket, _ = take(None, now=0.0, rate=1.0, burst=2)
    bucket, _ = take(bucket, now=0.0, rate=1.0, burst=2)
    bucket, wait = take(bucket, now=1000.0, rate=1.0, burst=2)
    assert wait == 0.0 and bucket.tokens == pytest.approx(1.0)


def test_a_cursor_round_trips_and_is_refused_by_another_list() -> None:
    cursor = encode_cursor("events", 42)
    assert decode_cursor("events", cursor, 0) == 42
    assert decode_cursor("events", None, 0) == 0
    with pytest.raises(ValidationError) as refused:
        decode_cursor("worlds", cursor, 0)
    assert refused.value.field == "cursor"
    with pytest.raises(ValidationError):
        decode_cursor("events", "not*base64!", 0)
