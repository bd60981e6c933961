"""Bounded polling for tests: wait for a condition instead of sleeping a fixed time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def eventually(
    probe: Callable[[], Awaitable[T]], until: Callable[[T], bool], timeout: float = 60.0
) -> T:
    """Call ``probe`` until ``until(result)`` holds; fail with the last result after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        result = await probe()
        if until(result):
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout:.0f}s; last value: {result!r}")
        await asyncio.sleep(0.05)
