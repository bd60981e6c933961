"""Time-ordered identifiers (UUID version 7, RFC 9562) for events and entities."""

from __future__ import annotations

import os
import threading
import time
import uuid

__all__ = ["new_id", "uuid7"]

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
    rand = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | counter << 64 | 0b10 << 62 | rand
    return uuid.UUID(int=value)


def new_id() -> str:
    """A fresh time-ordered id as a string (used for worlds, NPCs and memories)."""
    return str(uuid7())
