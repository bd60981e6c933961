"""One reflection run: recent memories → 3 questions → retrieval per question → insights with evidence,
stored as one ReflectionCompleted event (or one ReflectionFailed), exactly once per run key."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, TypedDict

from npcworld.cause import handling
from npcworld.contracts import (
    Envelope,
    EventPayload,
    ReflectionCompleted,
    ReflectionFailed,
    ReflectionInsight,
)
from npcworld.errors import ConcurrencyError, NotFoundError, PermanentError, ValidationError
from npcworld.eventstore import UnitOfWork
from npcworld.llm import LLM
from npcworld.llm.prompts import (
    MemoryItem,
    ReflectionInsightsInput,
    ReflectionInsightsOutput,
    ReflectionQuestionsInput,
    ReflectionQuestionsOutput,
)
from npcworld.llm.types import ProviderName
from npcworld.memory_client import MemoryReader, MemoryView, RetrievalRequest, relied_on
from npcworld.telemetry import current_trace
from services.reflection.deps import RunDeps
from services.reflection.domain import CitedInsight, ShownMemory, cite_evidence, merge_insights, prompt_order
from services.reflection.job import ReflectionJob
from services.reflection.repository import NpcKey
from services.reflection.settings import ReflectionSettings

__all__ = ["Outcome", "compose_reflection", "run_reflection"]

logger = logging.getLogger(__name__)
Outcome = Literal["completed", "failed", "already_done"]
# The run's stream holds ReflectionTriggered (version 1) and then exactly one outcome event.
_TRIGGERED_VERSION = 1


class _Scope(TypedDict):
    tenant_id: str
    world_id: str
    npc_id: str
    world_time: datetime


async def run_reflection(job: ReflectionJob, deps: RunDeps) -> Outcome:
    """Run the reflection ``job`` unless its run already has an outcome.

    Permanent failures (malformed model output after retries, a refused request, an unknown NPC) are
    recorded as ReflectionFailed and nothing of the run is stored. Transient ones (provider or memory
    service down with LLM_OUTAGE_POLICY=fail) raise, and the job is retried.

    Raises:
        TransientError: retry the job later.
    """
    async with deps.pool.connection() as conn:
        if await deps.store.stream_version(conn, job.tenant_id, job.run_key) > _TRIGGERED_VERSION:
            return "already_done"
        name = await deps.repository.name(conn, NpcKey(job.tenant_id, job.world_id, job.npc_id))
    try:
        with handling(job.trigger_event_id, job.correlation_id):  # the run's calls are for its trigger
            outcome: EventPayload = await compose_reflection(
                job, name or job.npc_id, llm=deps.llm, reader=deps.reader, settings=deps.settings
            )
    except (PermanentError, ValidationError, NotFoundError) as exc:
        logger.warning("reflection %s failed: %s", job.run_key, exc)
        reason = f"{type(exc).__name__}: {exc}"[:2000]
        outcome = ReflectionFailed(run=job.run, run_key=job.run_key, reason=reason)
    return await _store(job, outcome, deps)


async def compose_reflection(
    job: ReflectionJob, name: str, *, llm: LLM, reader: MemoryReader, settings: ReflectionSettings
) -> ReflectionCompleted:
    """Ask the questions and the insights and map their evidence; stores nothing.

    A player's uncorroborated claim (``relied_on`` false) is never shown to the model, so no insight rests on
    one (docs/reflection.md "Claims").

    Raises:
        LLMOutputError, LLMRequestError: the model's answers are unusable (permanent).
        NotFoundError: the NPC has no memories it relies on (or none for any question).
        TransientError: the provider or the memory service is unavailable.
    """
    scope = _Scope(tenant_id=job.tenant_id, world_id=job.world_id, npc_id=job.npc_id,
                   world_time=job.world_time)
    recent = [m for m in await reader.recent(job.tenant_id, job.world_id, job.npc_id,
                                             limit=settings.reflection_recent) if relied_on(m)]
    if not recent:
        raise NotFoundError(f"NPC {job.npc_id!r} has no memories to reflect on")
    shown = _items(recent)
    asked = await llm.complete(
        "reflection_questions", ReflectionQuestionsInput(npc_name=name, memories=shown),
        ReflectionQuestionsOutput, **scope,
    )
    providers = {asked.provider}
    per_question: list[list[CitedInsight]] = []
    run = _Run(job, name, llm, reader, settings)
    for index, question in enumerate(asked.value.questions):
        if (answered := await run.answer(index, question, scope)) is not None:
            providers.add(answered[0])
            per_question.append(answered[1])
    insights = tuple(ReflectionInsight(text=i.text, question=i.question, evidence=i.evidence, depth=i.depth)
                     for i in merge_insights(per_question))
    if not insights:
        raise NotFoundError(f"NPC {job.npc_id!r} has no memories it relies on for its questions")
    provider = providers.pop() if len(providers) == 1 else "mixed"
    return ReflectionCompleted(run=job.run, run_key=job.run_key, questions=asked.value.questions,
                               insights=insights, memories_considered=len(recent), provider=provider)


@dataclass(frozen=True)
class _Run:
    job: ReflectionJob
    name: str
    llm: LLM
    reader: MemoryReader
    settings: ReflectionSettings

    async def answer(
        self, index: int, question: str, scope: _Scope
    ) -> tuple[ProviderName, list[CitedInsight]] | None:
        """One question's insights from the memories the NPC relies on, their evidence numbers mapped to
        memory ids, with the answer's provider; None when only claims came back for it."""
        job = self.job
        retrieved = await self.reader.retrieve(RetrievalRequest(
            tenant_id=job.tenant_id, world_id=job.world_id, npc_id=job.npc_id, query=question,
            k=self.settings.reflection_retrieve_k, now=job.world_time,
        ))
        ordered = _ordered([m for m in retrieved if relied_on(m)])
        if not ordered:
            return None
        answer = await self.llm.complete(
            "reflection_insights",
            ReflectionInsightsInput(npc_name=self.name, question=question, memories=_items(ordered)),
            ReflectionInsightsOutput, **scope,
        )
        pairs = [(i.text, i.evidence) for i in answer.value.insights]
        return answer.provider, cite_evidence(index, [_shown(m) for m in ordered], pairs)


def _shown(m: MemoryView) -> ShownMemory:
    return ShownMemory(m.memory_id, m.created_at, m.depth)


def _ordered(memories: Sequence[MemoryView]) -> list[MemoryView]:
    by_id = {m.memory_id: m for m in memories}
    return [by_id[s.memory_id] for s in prompt_order([_shown(m) for m in memories])]


def _items(memories: Sequence[MemoryView]) -> tuple[MemoryItem, ...]:
    return tuple(MemoryItem(id=m.memory_id, description=m.description, importance=m.importance)
                 for m in _ordered(memories))


async def _store(job: ReflectionJob, outcome: EventPayload, deps: RunDeps) -> Outcome:
    async with deps.pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, deps.store)
        event = Envelope.new(outcome, tenant_id=job.tenant_id, world_id=job.world_id,
                             world_time=job.world_time, npc_id=job.npc_id, trace=current_trace())
        event = event.model_copy(
            update={"causation_id": job.trigger_event_id, "correlation_id": job.correlation_id}
        )
        try:
            await uow.append(job.run_key, [event], expected_version=_TRIGGERED_VERSION)
        except ConcurrencyError:
            # Another delivery of the same job stored its outcome first: this one is a duplicate.
            return "already_done"
    result: Outcome = "completed" if isinstance(outcome, ReflectionCompleted) else "failed"
    logger.info("reflection %s %s", job.run_key, result)
    return result
