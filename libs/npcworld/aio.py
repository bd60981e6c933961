"""The event loop every long-running process of the backend runs on: uvloop where it is installed (the
default install has it), else asyncio's own.

Under client load the services' event loops were a good part of their CPU (the selector, transports and
callbacks, in Python); libuv's loop does the same work in C (with uvicorn's httptools parser, the gateway
spent 14-33 % less CPU per request: docs/benchmarks.md). ``NPCWORLD_EVENT_LOOP=asyncio`` runs asyncio's loop
instead (for an operator chasing a loop-specific problem); the behaviour is the same either way.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["loop_factory", "loop_name", "run"]

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop factory, or None (asyncio's default) when it is turned off or not installed."""
    if os.environ.get("NPCWORLD_EVENT_LOOP", "uvloop").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def loop_name() -> str:
    """The loop ``run`` uses here ("uvloop" or "asyncio"): uvicorn's ``--loop`` takes the same names."""
    return "asyncio" if loop_factory() is None else "uvloop"


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the loop this module picks."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
