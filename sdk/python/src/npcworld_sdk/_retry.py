"""When a call is tried again: on 429 and 503 (after ``Retry-After`` when the server sends it), on a lost
connection, and on a 409 saying the first try of the same Idempotency-Key is still running."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from npcworld_sdk._errors import retry_after_seconds

__all__ = ["RetryPolicy"]

_RETRIED_STATUSES = frozenset({429, 503})
_IN_PROGRESS = "still in progress"


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` tries in all; waits grow from ``base_delay``, doubling, up to ``max_delay`` (jittered).

    A ``Retry-After`` from the server is honoured as given, up to ``max_retry_after`` seconds (a longer wait
    raises the error instead, so a call never hangs for minutes).
    """

    attempts: int = 4
    base_delay: float = 0.25
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    jitter: Callable[[], float] = field(default=random.random, compare=False)

    def delay(self, attempt: int, retry_after: str | None = None) -> float | None:
        """Seconds to wait before try ``attempt + 1`` (``attempt`` counts from 0), or None to give up."""
        if attempt + 1 >= self.attempts:
            return None
        asked = retry_after_seconds(retry_after)
        if asked is not None:
            return asked if asked <= self.max_retry_after else None
        backoff = min(self.max_delay, self.base_delay * 2.0**attempt)
        return backoff * (0.5 + self.jitter() / 2)

    def retries_answer(self, response: httpx.Response, attempt: int) -> bool:
        """Whether this error answer is worth another try of the same request."""
        if response.status_code in _RETRIED_STATUSES:
            return True
        # A retry that overtook its own first try (sent, then the connection lost): wait for the first one.
        return attempt > 0 and response.status_code == 409 and _IN_PROGRESS in response.text

    @staticmethod
    def retries_failure(method: str, exc: httpx.TransportError) -> bool:
        """Whether a call that got no answer may be sent again: always when it never left (no connection);
        otherwise only when repeating it is safe (GET, DELETE, and POST, which carries an Idempotency-Key)."""
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            return True
        return method in ("GET", "DELETE", "POST")
