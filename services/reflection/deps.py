"""What the reflection consumer's handlers and the reflection job are given (built in the entrypoints)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from psycopg_pool import AsyncConnectionPool

from npcworld.eventstore import EventStore
from npcworld.llm import LLM
from npcworld.memory_client import MemoryReader
from services.reflection.job import JobQueue
from services.reflection.repository import ReflectionRepository
from services.reflection.settings import ReflectionSettings

__all__ = ["ConsumerDeps", "RunDeps", "wall_clock"]


def wall_clock() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class ConsumerDeps:
    """The consumer's handlers: the accumulator table and the job queue."""

    queue: JobQueue
    settings: ReflectionSettings
    repository: ReflectionRepository = field(default_factory=ReflectionRepository)
    clock: Callable[[], datetime] = wall_clock


@dataclass(frozen=True)
class RunDeps:
    """A reflection run: memories through the MemoryReader port, the LLM, and the event store."""

    pool: AsyncConnectionPool
    llm: LLM
    reader: MemoryReader
    settings: ReflectionSettings
    repository: ReflectionRepository = field(default_factory=ReflectionRepository)
    store: EventStore = field(default_factory=EventStore)
