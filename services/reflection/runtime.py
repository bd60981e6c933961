"""The worker's long-lived state: one event loop per worker process and the run's dependencies on it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from npcworld.db import apply_migrations, open_pool
from npcworld.llm import build_llm
from npcworld.memory_client.http import HttpMemoryReader
from services.reflection.deps import RunDeps
from services.reflection.job import ReflectionJob
from services.reflection.reflect import Outcome, run_reflection
from services.reflection.settings import Settings

__all__ = ["WorkerRuntime", "build_run_deps"]

DepsBuilder = Callable[[], Awaitable[RunDeps]]


class WorkerRuntime:
    """Runs jobs on one event loop kept for the life of the worker process, so the connection pool, the
    LLM client (and its circuit breaker) survive from one job to the next. Nothing is built until the
    first job: under the prefork pool that happens in the child process."""

    def __init__(self, build: DepsBuilder) -> None:
        self._build = build
        self._loop: asyncio.AbstractEventLoop | None = None
        self._deps: RunDeps | None = None

    def run(self, job: ReflectionJob) -> Outcome:
        """Run one job to its end (blocking; called from a Celery task)."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(self._run(job))

    async def _run(self, job: ReflectionJob) -> Outcome:
        if self._deps is None:
            self._deps = await self._build()
        return await run_reflection(job, self._deps)

    def close(self) -> None:
        """Close the pool and the LLM client, then the loop."""
        if self._loop is None:
            return
        if self._deps is not None:
            deps = self._deps
            self._loop.run_until_complete(deps.pool.close())
            for closer in (getattr(deps.llm, "close", None), getattr(deps.reader, "aclose", None)):
                if closer is not None:
                    self._loop.run_until_complete(closer())
        self._loop.close()
        self._loop = None
        self._deps = None


def build_run_deps(settings: Settings, database_url: str) -> DepsBuilder:
    """The production builder: migrations, a pool, the LLM layer and the memory API client."""

    async def build() -> RunDeps:
        reader = HttpMemoryReader(settings.memory_api_url)
        await asyncio.to_thread(apply_migrations, database_url)
        pool = await open_pool(database_url, min_size=1, max_size=4, name="reflection-worker")
        return RunDeps(pool=pool, llm=build_llm(settings, pool), reader=reader, settings=settings)

    return build
