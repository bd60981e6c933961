"""Slow calls (model calls, retrievals over HTTP) belong outside consumer transactions: the guard for it.

The consumer loop marks the stretch in which it holds a transaction open (``in_transaction``); the LLM layer
and the memory client report each call they make (``slow_call``). A call made inside a transaction is
logged as a warning and counted (``npcworld.slow_calls.in_transaction``): it holds the transaction, and with
it the outbox relay behind it, open for as long as the call takes. Handlers are two-phase so this does not
happen: such calls belong in a route's gather step (``npcworld.messaging.routes``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextvars import ContextVar

from npcworld.cause import current_cause
from npcworld.telemetry import instruments

__all__ = ["current_transaction", "in_transaction", "slow_call"]

logger = logging.getLogger(__name__)

_consumer: ContextVar[str | None] = ContextVar("npcworld_consumer_transaction", default=None)


def current_transaction() -> str | None:
    """The consumer whose transaction this task is inside (None: outside any)."""
    return _consumer.get()


@contextlib.contextmanager
def in_transaction(consumer: str) -> Iterator[None]:
    """Work inside this block runs in ``consumer``'s open transaction."""
    token = _consumer.set(consumer)
    try:
        yield
    finally:
        _consumer.reset(token)


def slow_call(kind: str, what: str) -> None:
    """Report a slow call about to be made (``kind``: "llm" or "retrieval"; ``what``: the prompt or path):
    inside a consumer transaction it is logged and counted."""
    consumer = _consumer.get()
    if consumer is None:
        return
    cause = current_cause()
    logger.warning("%s call %s made inside consumer %s's transaction (event_id=%s)", kind, what, consumer,
                   cause.event_id if cause else None)
    instruments().slow_calls_in_transaction.add(1, {"consumer": consumer, "kind": kind})
