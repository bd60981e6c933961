"""Token bucket per API key: ``rate`` tokens/s refill a bucket of ``burst`` (pure; time is an argument)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Bucket", "take"]


@dataclass(frozen=True)
class Bucket:
    tokens: float
    updated: float


def take(bucket: Bucket | None, now: float, rate: float, burst: int) -> tuple[Bucket, float]:
    """Take one token at time ``now`` (seconds).

    Returns:
        The new bucket and 0.0 when the request may pass, or the unchanged-but-refilled bucket and the
        seconds until a token will be available when it must wait (the ``Retry-After``).
    """
    if bucket is None:
        bucket = Bucket(float(burst), now)
    tokens = min(float(burst), bucket.tokens + max(0.0, now - bucket.updated) * rate)
    if tokens >= 1.0:
        return Bucket(tokens - 1.0, now), 0.0
    return Bucket(tokens, now), (1.0 - tokens) / rate
