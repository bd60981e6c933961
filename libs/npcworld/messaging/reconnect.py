"""Riding out a lost Postgres or broker: which errors mean a dependency is away; the backoff until it is back.

Every long-running process (the consumer loop, the relay, the webhooks dispatcher, the world clock) keeps
going when Postgres or Kafka blinks: it says so in one line, retries with capped exponential backoff and
jitter (0.5 s doubling to 5 s), and says so again, once, when the dependency answers. What was in flight
was in an uncommitted transaction, so it rolls back and is done again; nothing is lost or done twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import psycopg
from aiokafka.errors import KafkaError

from npcworld.errors import TransientError

__all__ = ["DEPENDENCY_ERRORS", "Backoff", "is_outage"]

logger = logging.getLogger(__name__)
T = TypeVar("T")

# A dependency is away (or on its way back): the server went down, the pool has no connection to give,
# the broker is unreachable or timed out, a socket was refused. Not: a bad statement, a constraint.
DEPENDENCY_ERRORS: tuple[type[BaseException], ...] = (
    psycopg.OperationalError,
    KafkaError,
    ConnectionError,
    TimeoutError,
    TransientError,
)


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` (or the error it was raised from, e.g. an InfraError at start) means an outage."""
    return isinstance(exc, DEPENDENCY_ERRORS) or isinstance(exc.__cause__, DEPENDENCY_ERRORS)


class Backoff:
    """Capped exponential backoff with jitter, and the two log lines of an outage (lost, then back).

    ``failed`` logs the first failure of an outage at WARNING (later ones at DEBUG) and sleeps; ``succeeded``
    ends the outage (one INFO line with its length) and resets the delay.
    """

    def __init__(self, what: str, *, base: float = 0.5, cap: float = 5.0) -> None:
        self.what, self.base, self.cap = what, base, cap
        self.attempts = 0
        self._since: float | None = None

    @property
    def in_outage(self) -> bool:
        return self._since is not None

    def delay(self) -> float:
        """The next wait: ``base`` doubling per attempt up to ``cap``, with ±25 % jitter."""
        grown = self.base * 2.0 ** max(0, self.attempts - 1)
        return min(self.cap, grown) * random.uniform(0.75, 1.25)

    async def failed(self, exc: BaseException, stop: asyncio.Event | None = None) -> None:
        """Record a failure and wait before the next try (returns early when ``stop`` is set)."""
        self.attempts += 1
        wait = self.delay()
        if self._since is None:
            self._since = time.monotonic()
            logger.warning("%s: dependency unavailable (%s); retrying with backoff (%.1f s, up to %.0f s)",
                           self.what, _describe(exc), wait, self.cap)
        else:
            logger.debug("%s: still unavailable (attempt %d, %s)", self.what, self.attempts, _describe(exc))
        if stop is None:
            await asyncio.sleep(wait)
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), wait)

    def succeeded(self) -> None:
        """The dependency answered: end the outage, if one was under way."""
        if self._since is not None:
            logger.info("%s: reconnected after %.1f s (%d retries)", self.what,
                        time.monotonic() - self._since, self.attempts)
        self._since, self.attempts = None, 0

    async def call(
        self, fn: Callable[[], Awaitable[T]], stop: asyncio.Event, *, at_least_once: bool = False
    ) -> T | None:
        """``await fn()`` until it gets past an outage; None when ``stop`` was set first.

        ``at_least_once`` tries ``fn`` once even when ``stop`` is already set (only the retries after an
        outage give way to it): for recording what has already happened outside, such as a webhook
        attempt made just before a clean stop, which would otherwise be made again after a restart.

        Raises:
            Exception: whatever ``fn`` raised that is not an outage (see ``is_outage``).
        """
        first = at_least_once
        while first or not stop.is_set():
            first = False
            try:
                result = await fn()
            except Exception as exc:
                if not is_outage(exc):
                    raise
                await self.failed(exc, stop)
                continue
            self.succeeded()
            return result
        return None


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__
