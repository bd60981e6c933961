"""A circuit breaker: after N consecutive provider failures, calls fail fast until a trial succeeds."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from npcworld.llm.errors import CircuitOpenError
from npcworld.telemetry import instruments

__all__ = ["CircuitBreaker"]

logger = logging.getLogger(__name__)
State = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    """Closed: calls pass and consecutive failures are counted. Open (``failure_threshold`` reached):
    calls raise ``CircuitOpenError`` at once for ``reset_after_s``. Then half-open: one trial call
    passes; its success closes the breaker, its failure opens it again."""

    def __init__(
        self,
        name: str,
        failure_threshold: int = 5,
        reset_after_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.failure_threshold = failure_threshold
        self.reset_after_s = reset_after_s
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_started: float | None = None
        self._since = datetime.now(UTC)  # wall clock of the last change between closed and not closed
        self._opened_wall = self._since  # wall clock of the latest (re)opening
        self._last_failure: tuple[datetime, str] | None = None
        instruments().breakers.add(self)  # read by the npcworld.llm.breaker.open gauge

    @property
    def state(self) -> State:
        """The current state (an open breaker whose wait is over reads half-open)."""
        if self._opened_at is None:
            return "closed"
        if self._clock() - self._opened_at >= self.reset_after_s:
            return "half_open"
        return "open"

    def snapshot(self) -> dict[str, Any]:
        """The state as other processes read it (the heartbeat stores it): state, since when (an open
        breaker's half-open moment is when its wait ends), consecutive failures and the last failure."""
        state = self.state
        since = self._since
        if state == "half_open":
            since = datetime.fromtimestamp(self._opened_wall.timestamp() + self.reset_after_s, UTC)
        failed = self._last_failure
        return {"provider": self.name, "state": state, "since": since.isoformat(), "failures": self._failures,
                "last_failure_at": failed[0].isoformat() if failed else None,
                "last_failure": failed[1] if failed else None}

    def before_call(self) -> None:
        """Let a call through or refuse it.

        Raises:
            CircuitOpenError: the breaker is open, or half-open with its trial call still running.
        """
        state = self.state
        if state == "closed":
            return
        now = self._clock()
        # A trial that never reported back (its caller was cancelled) must not keep the breaker shut.
        if state == "half_open" and (
            self._trial_started is None or now - self._trial_started >= self.reset_after_s
        ):
            self._trial_started = now
            return
        assert self._opened_at is not None
        wait = max(0.0, self.reset_after_s - (now - self._opened_at))
        raise CircuitOpenError(
            f"{self.name} circuit open after {self._failures} consecutive failures; next trial in {wait:.1f}s"
        )

    def record_success(self) -> None:
        """A call succeeded: close the breaker."""
        if self._opened_at is not None:
            logger.info("%s circuit closed", self.name)
            self._since = datetime.now(UTC)
        self._failures = 0
        self._opened_at = None
        self._trial_started = None

    def record_failure(self, reason: str = "") -> None:
        """A call failed for a provider reason (not for our own bad output): count it, maybe open."""
        self._failures += 1
        self._last_failure = (datetime.now(UTC), reason[:300])
        if self._trial_started is not None or (
            self._opened_at is None and self._failures >= self.failure_threshold
        ):
            if self._opened_at is None:
                instruments().llm_breaker_opened.add(1, {"provider": self.name})
                logger.warning("%s circuit opened after %d consecutive failures", self.name, self._failures)
                self._since = datetime.now(UTC)
            self._opened_at, self._opened_wall = self._clock(), datetime.now(UTC)
        self._trial_started = None
