"""A reflection job (what a trigger asks the Celery worker to do) and the port that enqueues it."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["JobQueue", "ReflectionJob"]


class ReflectionJob(BaseModel):
    """Run ``run`` of one NPC at world time ``world_time``; ``run_key`` makes it idempotent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant_id: str = Field(min_length=1)
    world_id: str = Field(min_length=1)
    npc_id: str = Field(min_length=1)
    run: int = Field(ge=1)
    run_key: str = Field(min_length=1)
    world_time: datetime
    trigger_event_id: uuid.UUID
    correlation_id: uuid.UUID


class JobQueue(Protocol):
    """Where reflection jobs go: Celery in production, a list in unit tests."""

    async def enqueue(self, job: ReflectionJob) -> None:
        """Hand the job to a worker (at least once; the job is idempotent by ``run_key``)."""
        ...
