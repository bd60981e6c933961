"""What happens after a delivery attempt: delivered, retried after an exponential backoff, or failed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Outcome", "RetryPolicy", "after_attempt"]


@dataclass(frozen=True)
class RetryPolicy:
    """Failed attempt n (1-based) waits ``min(cap, base * 2**(n-1))``; after ``max_attempts``: failed."""

    max_attempts: int = 8
    base_seconds: float = 2.0
    cap_seconds: float = 600.0


@dataclass(frozen=True)
class Outcome:
    status: Literal["pending", "delivered", "failed"]
    retry_in: float | None


def after_attempt(
    policy: RetryPolicy, attempt: int, status_code: int | None, *, permanent: bool = False
) -> Outcome:
    """Decide the delivery's state after attempt number ``attempt``; any 2xx is delivered.

    Args:
        policy: the retry schedule.
        attempt: how many attempts have been made, this one included.
        status_code: the receiver's HTTP status, or None when no answer came (timeout, refused).
        permanent: the attempt failed in a way retrying cannot fix (the receiver's address is refused
            by the egress policy): failed at once.
    """
    if status_code is not None and 200 <= status_code < 300:
        return Outcome("delivered", None)
    if permanent or attempt >= policy.max_attempts:
        return Outcome("failed", None)
    return Outcome("pending", min(policy.cap_seconds, policy.base_seconds * 2 ** (attempt - 1)))
