"""Backoff between provider attempts: exponential with jitter, and the server's Retry-After honoured."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["Backoff", "parse_retry_after"]


@dataclass(frozen=True)
class Backoff:
    """Delay before retry ``n`` (1-based): ``base * 2**(n-1)`` with up to 50% jitter, at least the
    server's Retry-After, never more than ``max_delay``."""

    base_delay: float = 0.5
    max_delay: float = 30.0

    def delay(
        self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number ``attempt``."""
        exponential = self.base_delay * 2 ** (attempt - 1)
        jittered = exponential * (0.5 + 0.5 * (rng or random).random())
        wanted = max(jittered, retry_after or 0.0)
        return float(min(self.max_delay, wanted))


def parse_retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds a server asked us to wait: ``retry-after-ms``, else ``retry-after`` (seconds or a date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if (ms := lowered.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
