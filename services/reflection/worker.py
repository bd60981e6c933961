"""Celery worker entrypoint: ``celery -A services.reflection.worker worker`` runs reflection jobs.

Celery's ``-A`` needs a module-level app, so building it happens at import: that reads the settings and
connects to nothing (the broker on the worker's start, the database on the first job).
"""

from __future__ import annotations

from celery import Celery
from celery.signals import worker_process_shutdown

from npcworld.settings import resolve_endpoints
from services.reflection.celery_app import create_celery
from services.reflection.runtime import WorkerRuntime, build_run_deps
from services.reflection.settings import Settings
from services.reflection.tasks import register_tasks

__all__ = ["app", "create_worker_app"]


def create_worker_app(settings: Settings) -> Celery:
    """The worker's Celery app with the reflection task bound to a production runtime."""
    database_url = resolve_endpoints(settings).database_url
    worker = create_celery(settings, settings.broker_url(database_url))
    runtime = WorkerRuntime(build_run_deps(settings, database_url))
    register_tasks(worker, runtime, retries=settings.reflection_job_retries)
    worker_process_shutdown.connect(lambda **_: runtime.close(), weak=False)
    return worker


app = create_worker_app(Settings())
