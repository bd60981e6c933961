"""Kafka offset commits that run beside the next poll instead of in front of it.

The database commit is what makes an event handled (``processed_events``); the offset commit only spares a
restarted consumer redeliveries it would skip. So the loop need not wait for the broker's answer before it
fetches and handles the next poll: one commit is in flight at a time, and each waits for the one before it,
so a partition's committed offset only moves forward.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

__all__ = ["OffsetCommits"]

logger = logging.getLogger(__name__)

Offsets = dict[TopicPartition, int]


class OffsetCommits:
    """Commits a consumer's offsets in order, at most one in flight; ``done`` hears of each once its commit
    ended (failed ones too: the records were handled, a redelivery is skipped)."""

    def __init__(self, name: str, consumer: AIOKafkaConsumer, done: Callable[[Offsets], None]) -> None:
        self.name = name
        self.consumer = consumer
        self.done = done
        self._pending: asyncio.Task[None] | None = None

    async def send(self, offsets: Offsets) -> None:
        """Wait for the commit in flight, then start committing ``offsets`` (only after the database commit
        of the records they cover)."""
        await self.settle()
        if offsets:
            self._pending = asyncio.create_task(self._commit(offsets), name=f"{self.name}-offset-commit")

    async def settle(self) -> None:
        """Wait for the commit in flight, if any (before the consumer stops or its partitions change)."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        try:
            await asyncio.shield(pending)
        except asyncio.CancelledError:
            with contextlib.suppress(BaseException):
                await pending  # let it end: a commit cut short must not outlive the consumer it used
            raise

    async def _commit(self, offsets: Offsets) -> None:
        try:
            await self.consumer.commit(offsets)
        except KafkaError as exc:
            # The database already holds the outcome; a redelivery is skipped as processed.
            logger.warning("%s: offset commit failed (%r); redelivered events will be skipped",
                           self.name, exc)
        self.done(offsets)  # handled either way: lag is measured from here
