"""Time-ordered identifiers (UUID version 7, RFC 9562) for events and entities."""

from __future__ import annotations

import contextvars
import hashlib
import os
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["event_id", "ids_repeatable_from", "new_id", "uuid7"]

_lock = threading.Lock()
_last_ms = 0
_counter = 0


def uuid7(unix_ms: int | None = None) -> uuid.UUID:
    """Return a UUIDv7: 48-bit millisecond timestamp, then a 12-bit counter, then random bits.

    The counter keeps ids generated in the same millisecond by one process strictly increasing,
    so sorting by id matches creation order.
    """
    global _last_ms, _counter
    with _lock:
        ms = int(time.time() * 1000) if unix_ms is None else unix_ms
        if ms <= _last_ms:
            ms = _last_ms
            _counter += 1
            if _counter > 0xFFF:
                ms += 1
                _counter = 0
        else:
            _counter = 0
        _last_ms = ms
        counter = _counter
    return _layout(ms, counter, int.from_bytes(os.urandom(8), "big"))


def _layout(ms: int, counter: int, rand: int) -> uuid.UUID:
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (counter & 0xFFF) << 64 | 0b10 << 62
    return uuid.UUID(int=value | rand & ((1 << 62) - 1))


@dataclass
class _Repeatable:
    seed: bytes
    ms: int
    made: int = 0


_repeatable: contextvars.ContextVar[_Repeatable | None] = contextvars.ContextVar("ids", default=None)


@contextmanager
def ids_repeatable_from(seed: str, unix_ms: int) -> Iterator[None]:
    """Within this block, ``event_id`` gives the n-th event the same id every time the block runs with the
    same ``seed`` and time: a request run again under its ``Idempotency-Key`` (its first run cut short by a
    crash) makes the events its first run made, so storing one of them again is seen, not doubled. The ids
    keep the UUIDv7 layout, stamped with ``unix_ms``."""
    token = _repeatable.set(_Repeatable(hashlib.sha256(seed.encode()).digest(), unix_ms))
    try:
        yield
    finally:
        _repeatable.reset(token)


def event_id() -> uuid.UUID:
    """A new event's id: ``uuid7()``, or the next repeatable one inside ``ids_repeatable_from``."""
    scope = _repeatable.get()
    if scope is None:
        return uuid7()
    n, scope.made = scope.made, scope.made + 1
    digest = hashlib.sha256(scope.seed + n.to_bytes(4, "big")).digest()
    return _layout(scope.ms, n, int.from_bytes(digest[:8], "big"))


def new_id() -> str:
    """A fresh time-ordered id as a string (used for worlds, NPCs and memories)."""
    return str(uuid7())
