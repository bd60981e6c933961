"""Retry policy: which failures are transient, and how long to back off."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

import psycopg
from aiokafka.errors import KafkaError

from npcworld.errors import ConcurrencyError, TransientError

__all__ = ["TRANSIENT_ERRORS", "RetryPolicy"]

# Failures worth retrying the whole batch for: the database or broker went away, a serialization
# conflict, or a lost optimistic-concurrency race (re-reading the stream resolves it).
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    psycopg.OperationalError,
    psycopg.errors.SerializationFailure,
    psycopg.errors.DeadlockDetected,
    KafkaError,
    TransientError,
    ConcurrencyError,
    TimeoutError,
)


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter.

    ``handler_attempts`` bounds retries of an event whose handler raised an unexpected error;
    after that it is dead-lettered. Transient infrastructure failures are retried without limit
    (the service stalls and recovers rather than dropping events).
    """

    handler_attempts: int = 3
    base_delay: float = 0.05
    max_delay: float = 5.0

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        return random.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))

    async def sleep(self, attempt: int) -> None:
        """Back off before retry number ``attempt``."""
        await asyncio.sleep(self.delay(attempt))
