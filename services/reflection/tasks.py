"""The reflection Celery task: as thin as a handler; the run is idempotent by its run key."""

from __future__ import annotations

from typing import Any

import psycopg
from celery import Celery, Task

from npcworld.errors import TransientError
from services.reflection.celery_app import TASK_NAME
from services.reflection.job import ReflectionJob
from services.reflection.runtime import WorkerRuntime

__all__ = ["register_tasks"]


def register_tasks(app: Celery, runtime: WorkerRuntime, *, retries: int) -> Task:
    """Register ``reflection.run`` on ``app``: transient failures retry with exponential backoff; a run
    that keeps failing stays pending and is enqueued again by the consumer later (Postgres down or
    restarting is transient too)."""

    @app.task(  # type: ignore[untyped-decorator]
        name=TASK_NAME, bind=True, autoretry_for=(TransientError, OSError, psycopg.OperationalError),
        retry_backoff=True,
        retry_backoff_max=300, max_retries=retries, shared=False,
    )
    def run(self: Task, job: dict[str, Any]) -> str:
        return runtime.run(ReflectionJob.model_validate(job))

    task: Task = run
    return task
