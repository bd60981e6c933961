"""The reflection Celery app (broker from settings) and the JobQueue adapter that enqueues onto it."""

from __future__ import annotations

import asyncio

from celery import Celery
from kombu.exceptions import OperationalError as KombuOperationalError
from sqlalchemy.exc import OperationalError as SQLAlchemyOperationalError

from npcworld.errors import TransientError
from services.reflection.job import ReflectionJob
from services.reflection.settings import ReflectionSettings

__all__ = ["TASK_NAME", "CeleryJobQueue", "create_celery"]

TASK_NAME = "reflection.run"


def create_celery(settings: ReflectionSettings, broker_url: str) -> Celery:
    """A Celery app on ``broker_url`` whose default queue is REFLECTION_QUEUE; connects nothing yet.

    Late acknowledgement with one message prefetched: a worker that dies mid-run leaves the message to
    be redelivered, which is safe because a run is idempotent by its key. The SQLAlchemy transport polls
    its table once a second (kombu hands every transport option to ``create_engine``, so the interval
    cannot be set there); Redis and RabbitMQ push.
    """
    app = Celery("reflection", broker=broker_url, set_as_current=False)
    app.conf.update(
        task_default_queue=settings.reflection_queue,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        worker_prefetch_multiplier=1,
        worker_concurrency=settings.reflection_worker_concurrency,
        worker_pool=settings.reflection_worker_pool,
        worker_hijack_root_logger=False,
        broker_connection_retry_on_startup=True,
    )
    return app


class CeleryJobQueue:
    """Enqueues reflection jobs as Celery messages (the send runs in a thread: kombu blocks)."""

    def __init__(self, app: Celery, queue: str) -> None:
        self._app = app
        self._queue = queue

    async def enqueue(self, job: ReflectionJob) -> None:
        """Send the job.

        Raises:
            TransientError: the Celery broker is unreachable (the embedded one is Postgres: down or
                restarting); the consumer loop then retries the event with backoff, never dead-letters it.
        """
        try:
            await asyncio.to_thread(
                self._app.send_task, TASK_NAME, args=[job.model_dump(mode="json")], queue=self._queue
            )
        except (KombuOperationalError, SQLAlchemyOperationalError, OSError) as exc:
            raise TransientError(f"the Celery broker is unreachable: {exc}") from exc
