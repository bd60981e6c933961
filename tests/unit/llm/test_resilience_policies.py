"""Circuit breaker, backoff and Retry-After parsing, on a fake clock (no sleeping)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from npcworld.llm import Backoff, CircuitBreaker, CircuitOpenError, parse_retry_after


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def state_of(breaker: CircuitBreaker) -> str:
    """The state, read afresh (keeps the type checker from narrowing across calls)."""
    return breaker.state


def test_breaker_opens_after_consecutive_failures_and_fails_fast() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("p", failure_threshold=3, reset_after_s=10, clock=clock)
    for _ in range(2):
        breaker.before_call()
        breaker.record_failure()
    assert state_of(breaker) == "closed"
    breaker.before_call()
    breaker.record_failure()
    assert state_of(breaker) == "open"
    with pytest.raises(CircuitOpenError, match=r"next trial in 10\.0s"):
        breaker.before_call()


def test_a_success_resets_the_failure_count() -> None:
    breaker = CircuitBreaker("p", failure_threshold=2, reset_after_s=10, clock=FakeClock())
    breaker.record_failure()
    breaker.record_success()
    breaker.record_failure()
    assert state_of(breaker) == "closed"


def test_half_open_lets_one_trial_through_and_closes_on_success() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("p", failure_threshold=1, reset_after_s=10, clock=clock)
    breaker.record_failure()
    clock.now += 10
    assert state_of(breaker) == "half_open"
    breaker.before_call()
    with pytest.raises(CircuitOpenError):
        breaker.before_call()  # only one trial at a time
    breaker.record_success()
    assert state_of(breaker) == "closed"


def test_a_failed_trial_opens_the_breaker_again() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("p", failure_threshold=1, reset_after_s=10, clock=clock)
    breaker.record_failure()
    clock.now += 10
    breaker.before_call()
    breaker.record_failure()
    assert state_of(breaker) == "open"


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    backoff = Backoff(base_delay=1.0, max_delay=5.0)
    rng = random.Random(7)
    for attempt, full in ((1, 1.0), (2, 2.0), (3, 4.0)):
        assert full / 2 <= backoff.delay(attempt, rng=rng) <= full
    assert backoff.delay(10, rng=rng) == 5.0


def test_backoff_waits_at_least_retry_after_but_never_past_the_cap() -> None:
    backoff = Backoff(base_delay=0.01, max_delay=30.0)
    assert backoff.delay(1, retry_after=7.0) == 7.0
    assert backoff.delay(1, retry_after=600.0) == 30.0


def test_retry_after_forms() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"Retry-After": "Wed, 01 Jan 2025 12:00:05 GMT"}, now=now) == 5.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_a_trial_that_never_reports_back_does_not_keep_the_breaker_shut() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("p", failure_threshold=1, reset_after_s=10, clock=clock)
    breaker.record_failure()
    clock.now += 10
    breaker.before_call()  # the trial's caller is cancelled and never records a result
    clock.now += 10
    breaker.before_call()  # a new trial is allowed
    breaker.record_success()
    assert state_of(breaker) == "closed"


def test_the_snapshot_says_the_state_since_when_and_the_last_failure() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("openai", failure_threshold=2, reset_after_s=10, clock=clock)
    assert breaker.snapshot()["state"] == "closed" and breaker.snapshot()["last_failure"] is None
    before = datetime.now(UTC)
    breaker.record_failure("HTTP 503 from the provider")
    breaker.record_failure("connect timeout")
    opened = breaker.snapshot()
    assert opened["state"] == "open" and opened["failures"] == 2
    assert opened["last_failure"] == "connect timeout"
    assert datetime.fromisoformat(opened["since"]) >= before
    clock.now += 10
    half = breaker.snapshot()
    assert half["state"] == "half_open"
    waited = datetime.fromisoformat(half["since"]) - datetime.fromisoformat(opened["since"])
    assert waited.total_seconds() >= 9
    breaker.record_success()
    closed = breaker.snapshot()
    assert closed["state"] == "closed" and closed["last_failure"] == "connect timeout"
