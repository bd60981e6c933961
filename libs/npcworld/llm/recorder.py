"""Recording finished calls: the ``llm_calls`` row, the budget event, metrics and the caller's result."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from npcworld.cause import current_cause
from npcworld.contracts import Envelope, LLMBudgetExhausted
from npcworld.llm.budgets import Exhaustion
from npcworld.llm.live import Attempts
from npcworld.llm.repository import CallRecord, LLMCallRepository
from npcworld.llm.request import PreparedCall
from npcworld.llm.types import LLMResult, Outcome, ProviderName
from npcworld.telemetry import current_trace, instruments

__all__ = ["CallRecorder", "CallScope", "call_record", "result_of"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallScope:
    """Whose call it is, and the world time stamped on a budget event."""

    tenant_id: str
    world_id: str
    npc_id: str | None
    world_time: datetime | None


def call_record(
    call: PreparedCall,
    scope: CallScope,
    provider: ProviderName,
    model: str,
    outcome: Outcome,
    value: BaseModel | None,
    attempts: Attempts,
    error: str | None = None,
) -> CallRecord:
    """The ``llm_calls`` row of a finished call."""
    return CallRecord(
        tenant_id=scope.tenant_id,
        world_id=scope.world_id,
        npc_id=scope.npc_id,
        prompt_kind=call.template.kind,
        template_version=call.template.version,
        request_hash=call.request_hash,
        model=model,
        provider=provider,
        parameters=call.parameters,
        request=None,  # rendered again from the template's kind, version and inputs (render_recorded)
        prompt_chars=sum(len(m.get("content", "")) for m in call.messages),
        response=None if value is None else value.model_dump(mode="json"),
        response_text=attempts.text or None,
        outcome=outcome,
        tokens_in=attempts.tokens_in,
        tokens_out=attempts.tokens_out,
        attempts=attempts.attempts,
        error=error,
        cause_event_id=cause.event_id if (cause := current_cause()) else None,
        inputs=call.inputs.model_dump(mode="json"),
    )


def result_of(
    value: BaseModel, provider: ProviderName, record: CallRecord, latency_ms: float
) -> LLMResult[Any]:
    """The caller's view of a recorded call."""
    return LLMResult(
        value,
        provider,
        record.model,
        f"{record.prompt_kind}@v{record.template_version}",
        record.request_hash,
        record.outcome,
        record.tokens_in,
        record.tokens_out,
        latency_ms,
    )


class CallRecorder:
    """Stores call records through the repository and counts them in metrics."""

    def __init__(self, repository: LLMCallRepository) -> None:
        self._repository = repository

    async def save(self, record: CallRecord, latency_ms: float) -> None:
        """Store the record and count it."""
        await self._repository.add(replace(record, latency_ms=latency_ms))
        self._observe(record, latency_ms)

    async def save_budget_fallback(
        self, record: CallRecord, scope: CallScope, exhaustion: Exhaustion, latency_ms: float
    ) -> None:
        """Store a budget-fallback record; the world's first one also appends ``LLMBudgetExhausted``."""
        payload = LLMBudgetExhausted(
            scope=exhaustion.scope,
            limit_tokens=exhaustion.limit_tokens,
            used_tokens=exhaustion.used_tokens,
            prompt_kind=record.prompt_kind,
        )
        event = Envelope.new(
            payload,
            tenant_id=scope.tenant_id,
            world_id=scope.world_id,
            world_time=scope.world_time or datetime.now(UTC),
            trace=current_trace(),
        )
        if await self._repository.add_fallback(replace(record, latency_ms=latency_ms), event):
            logger.warning(
                "LLM %s budget of world %s exhausted (%d/%d tokens): answering offline",
                exhaustion.scope,
                scope.world_id,
                exhaustion.used_tokens,
                exhaustion.limit_tokens,
            )
        self._observe(record, latency_ms)

    def _observe(self, record: CallRecord, latency_ms: float) -> None:
        m = instruments()
        base = {"prompt_kind": record.prompt_kind, "provider": record.provider, "world_id": record.world_id}
        per_npc = {**base, "npc_id": record.npc_id or ""}
        m.llm_calls.add(1, {**per_npc, "outcome": record.outcome})
        m.llm_tokens_in.add(record.tokens_in, per_npc)
        m.llm_tokens_out.add(record.tokens_out, per_npc)
        m.llm_latency.record(latency_ms / 1000, base)
