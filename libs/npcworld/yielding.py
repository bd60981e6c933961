"""Model work done for ingest traffic yields the CPU to everything else.

The lanes (``npcworld.lanes``) decide what a consumer handles first, but on a machine that client traffic
saturates they cannot decide who gets the CPU: a perception's embedding, running in one service, takes a
core from the step cascade running in the others just the same. Blocking model calls (an embedding, a local
model's inference) made while an ingest event is handled, or for an internal request made on its behalf,
therefore run on worker threads of a lower scheduling priority (``INGEST_NICE``, default 10 above the
process's; 0 runs them like the rest). Nothing of ingest is lost or skipped: on a machine with spare CPU
these threads run at once; on a saturated one they get what the world's steps and the players' chats leave.
Work a consumer transaction waits for never yields: an open writer holds the outbox relay, and so every
world's next event, until it ends (``npcworld.slow_calls``). Work nobody waits for yields too, whatever its
lane (``unawaited``: the memory service recording a chat whose reply is already out).

Only the thread's nice value changes (Linux keeps one per thread; raising it needs no privilege). Elsewhere
the calls run on the ordinary threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import TypeVar

from npcworld.lanes import current_lane
from npcworld.slow_calls import current_transaction

__all__ = ["INGEST_THREADS", "ingest_nice", "lowered", "run_blocking", "unawaited", "yields"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

INGEST_THREADS = 2
_executor: ThreadPoolExecutor | None = None
_lock = threading.Lock()
_unawaited: ContextVar[bool] = ContextVar("npcworld_unawaited_model_work", default=False)


def ingest_nice() -> int:
    """How much lower ingest's model threads are scheduled (``INGEST_NICE``, 0-19; 0: not lowered)."""
    try:
        return max(0, min(19, int(os.environ.get("INGEST_NICE", "10"))))
    except ValueError:
        return 10


def yields(lane: str | None) -> bool:
    """Whether model work for ``lane`` runs on the lowered threads here."""
    return lane == "ingest" and ingest_nice() > 0 and sys.platform.startswith("linux")


def lowered(lane: str | None = None) -> bool:
    """Whether model work made now for ``lane`` (None: the lane of the event being handled) runs on the
    lowered threads: ingest work, or work nobody waits for (``unawaited``), that no consumer transaction
    waits for."""
    if current_transaction() is not None:
        return False
    return yields(lane if lane is not None else current_lane()) or (_unawaited.get() and yields("ingest"))


@contextlib.contextmanager
def unawaited() -> Iterator[None]:
    """Model work made meanwhile is work no one waits for, whatever its lane (the memory service recording
    a chat after its reply was sent): it yields the CPU as ingest's does."""
    token = _unawaited.set(True)
    try:
        yield
    finally:
        _unawaited.reset(token)


def _lower_this_thread(by: int) -> None:
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + by))
    except OSError as exc:  # a sandbox that forbids it: the thread runs at the process's priority
        logger.warning("could not lower the priority of an ingest model thread: %r", exc)


def _lowered() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(INGEST_THREADS, thread_name_prefix="ingest-model",
                                           initializer=_lower_this_thread, initargs=(ingest_nice(),))
        return _executor


async def run_blocking(func: Callable[..., T], *args: object, lane: str | None = None) -> T:
    """``asyncio.to_thread(func, *args)``, on a lowered thread when the work is for ingest (``lane``, or the
    lane of the event being handled) and no consumer transaction waits for it."""
    if not lowered(lane):
        return await asyncio.to_thread(func, *args)
    context = contextvars.copy_context()
    call = functools.partial(context.run, func, *args)
    return await asyncio.get_running_loop().run_in_executor(_lowered(), call)
