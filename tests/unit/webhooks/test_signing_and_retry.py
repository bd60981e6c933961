"""Webhook signatures verify only the exact body and timestamp; retries back off exponentially, then fail."""

from __future__ import annotations

from services.webhooks.domain import RetryPolicy, after_attempt, signature_header, verify

BODY = b'{"event_id":"e1","type":"ObservationMade"}'


def test_a_signature_verifies_the_body_it_was_made_for() -> None:
    header = signature_header("whsec_test", 1_700_000_000, BODY)
    assert header.startswith("t=1700000000,v1=")
    assert verify("whsec_test", header, BODY, now=1_700_000_010)


def test_a_changed_body_wrong_secret_or_stale_timestamp_fails_verification() -> None:
    header = signature_header("whsec_test", 1_700_000_000, BODY)
    assert not verify("whsec_test", header, BODY + b" ", now=1_700_000_000)
    assert not verify("whsec_other", header, BODY, now=1_700_000_000)
    assert not verify("whsec_test", header, BODY, now=1_700_000_000 + 301)
    assert not verify("whsec_test", "garbage", BODY, now=1_700_000_000)


def test_a_2xx_answer_is_delivered_at_any_attempt() -> None:
    assert after_attempt(RetryPolicy(), 1, 204).status == "delivered"
    assert after_attempt(RetryPolicy(max_attempts=3), 3, 200).status == "delivered"


def test_failures_wait_twice_as_long_each_time_up_to_the_cap() -> None:
    policy = RetryPolicy(max_attempts=10, base_seconds=2, cap_seconds=20)
    waits = [after_attempt(policy, n, 500).retry_in for n in range(1, 7)]
    assert waits == [2, 4, 8, 16, 20, 20]
    assert after_attempt(policy, 1, None).status == "pending"


def test_the_last_allowed_attempt_that_fails_marks_the_delivery_failed() -> None:
    outcome = after_attempt(RetryPolicy(max_attempts=3), 3, 503)
    assert outcome.status == "failed" and outcome.retry_in is None


def test_a_permanent_failure_fails_at_the_first_attempt_without_a_retry() -> None:
    outcome = after_attempt(RetryPolicy(max_attempts=8), 1, None, permanent=True)
    assert outcome.status == "failed" and outcome.retry_in is None
