"""``LLMClient``: the one LLM entry point of every service. It renders the prompt, answers from the live
provider, the offline provider or a recording, enforces budgets, records every call and counts it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from npcworld.llm.budgets import Exhaustion, exhausted
from npcworld.llm.errors import LLMOutputError, ProviderUnavailableError, ReplayMissingError
from npcworld.llm.live import Attempts, LiveCaller
from npcworld.llm.offline import OfflineCognition
from npcworld.llm.prompts import PromptTemplate, get_prompt
from npcworld.llm.recorder import CallRecorder, CallScope, call_record, result_of
from npcworld.llm.repository import LLMCallRepository
from npcworld.llm.request import PreparedCall, prepare
from npcworld.llm.settings import LLMSettings
from npcworld.llm.streaming import STREAMED_FIELDS, ChunkBatcher, Sink, current_sink, streaming_to, words
from npcworld.llm.structured import response_format
from npcworld.llm.types import OFFLINE_MODEL, ChatParams, LLMResult, Outcome
from npcworld.slow_calls import slow_call
from npcworld.telemetry import instruments, tracer
from npcworld.yielding import run_blocking

__all__ = ["LLMClient"]

logger = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)


class LLMClient:
    """Answers prompts for services. ``live`` is None when the offline provider is the primary one."""

    def __init__(
        self,
        repository: LLMCallRepository,
        settings: LLMSettings,
        *,
        live: LiveCaller | None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.repository = repository
        self._settings = settings
        self._live = live
        self._offline = OfflineCognition()
        self._clock = clock
        self._recorder = CallRecorder(repository)

    @property
    def model(self) -> str:
        """The model the primary provider asks for (part of every request hash)."""
        return self._live.provider.model if self._live else OFFLINE_MODEL

    async def complete(
        self,
        kind: str,
        inputs: BaseModel | Mapping[str, Any],
        output_model: type[T],
        *,
        tenant_id: str,
        world_id: str,
        npc_id: str | None = None,
        world_time: datetime | None = None,
    ) -> LLMResult[T]:
        """Answer prompt ``kind`` with a validated ``output_model``; the call is recorded and counted.

        Args:
            kind: a prompt kind of ``npcworld.llm.prompts.PROMPTS``.
            inputs: the template's input model, or a mapping validated into it.
            output_model: the template's output model (checked; it types the result).
            tenant_id, world_id, npc_id: whose call this is (budgets, records, metrics).
            world_time: stamped on a budget event; defaults to now.

        Raises:
            ValidationError: ``inputs`` do not fit the template.
            LLMOutputError: the model's output never validated (recorded as ``malformed``).
            LLMRequestError: the provider refused the request (recorded as ``error``).
            ProviderUnavailableError: provider down and LLM_OUTAGE_POLICY=fail (recorded as ``error``).
            ReplayMissingError: replay mode and no recording for this request.
        """
        slow_call("llm", kind)
        template = get_prompt(kind, output_model)
        call = prepare(kind, inputs, output_model, model=self.model, parameters=self._parameters(template))
        scope = CallScope(tenant_id, world_id, npc_id, world_time)
        attributes = {"npcworld.prompt": template.key, "npcworld.world_id": world_id}
        field = STREAMED_FIELDS.get(kind)
        sink = _Watched(outer) if field is not None and (outer := current_sink()) is not None else None
        with tracer().start_as_current_span("llm.complete", attributes=attributes) as span:
            async with streaming_to(sink):  # only this call's own kind streams to a caller's sink
                if self._settings.llm_mode == "replay":
                    result = await self._replay(call, scope)
                elif self._live is None:
                    result = await self._offline_answer(call, scope, "ok")
                else:
                    result = await self._live_answer(call, scope, self._live)
            span.set_attribute("npcworld.llm.provider", result.provider)
            span.set_attribute("npcworld.llm.outcome", result.outcome)
        if sink is not None and field is not None and not sink.sent:
            await sink.words_of(str(getattr(result.value, field)))
        return cast(LLMResult[T], result)

    async def close(self) -> None:
        """Close the provider's connections."""
        if self._live is not None:
            await self._live.provider.close()

    def _parameters(self, template: PromptTemplate[Any, Any]) -> dict[str, Any]:
        temperature = self._settings.llm_temperature
        return {
            "temperature": template.temperature if temperature is None else temperature,
            "max_tokens": template.max_tokens,
            "response_format": self._settings.llm_response_format,
        }

    async def _live_answer(self, call: PreparedCall, scope: CallScope, live: LiveCaller) -> LLMResult[Any]:
        usage = await self.repository.usage(scope.tenant_id, scope.world_id)
        s = self._settings
        if (exhaustion := exhausted(usage, s.llm_tenant_token_budget, s.llm_world_token_budget)) is not None:
            return await self._offline_answer(call, scope, "budget_fallback", exhaustion=exhaustion)
        started = self._clock()
        params = ChatParams(
            prompt=call.template.key,
            temperature=float(call.parameters["temperature"]),
            max_tokens=int(call.parameters["max_tokens"]),
            response_format=response_format(call.template, s.llm_response_format),
        )
        attempts = await live.call(call.template, call.inputs, call.messages, params)
        latency_ms = (self._clock() - started) * 1000
        if attempts.value is not None:
            record = call_record(call, scope, "openai", live.provider.model, "ok", attempts.value, attempts)
            await self._recorder.save(record, latency_ms)
            return result_of(attempts.value, "openai", record, latency_ms)
        error = attempts.error
        assert error is not None
        if isinstance(error, ProviderUnavailableError) and s.llm_outage_policy == "fallback":
            return await self._offline_answer(call, scope, "outage_fallback", attempts=attempts, error=error)
        outcome: Outcome = "malformed" if isinstance(error, LLMOutputError) else "error"
        record = call_record(call, scope, "openai", live.provider.model, outcome, None, attempts, str(error))
        await self._recorder.save(record, latency_ms)
        logger.warning(
            "LLM %s failed for world %s npc %s: %s", call.template.key, scope.world_id, scope.npc_id, error
        )
        raise error

    async def _offline_answer(
        self,
        call: PreparedCall,
        scope: CallScope,
        outcome: Outcome,
        *,
        attempts: Attempts | None = None,
        error: Exception | None = None,
        exhaustion: Exhaustion | None = None,
    ) -> LLMResult[Any]:
        started = self._clock()
        # In a worker thread: offline importance may run the embedding model, and the caller's event loop
        # (a service's API among others) must not wait on it.
        value = await run_blocking(self._offline.answer, call.template, call.inputs)
        spent = attempts or Attempts()
        record = call_record(
            call,
            scope,
            "offline",
            OFFLINE_MODEL,
            outcome,
            value,
            spent,
            None if error is None else str(error),
        )
        latency_ms = (self._clock() - started) * 1000
        if exhaustion is not None:
            await self._recorder.save_budget_fallback(record, scope, exhaustion, latency_ms)
        else:
            await self._recorder.save(record, latency_ms)
        if outcome != "ok":
            instruments().llm_fallbacks.add(1, {"prompt_kind": call.template.kind, "reason": outcome})
            logger.warning(
                "LLM %s answered offline (%s) for world %s npc %s",
                call.template.key,
                outcome,
                scope.world_id,
                scope.npc_id,
            )
        return result_of(value, "offline", record, latency_ms)

    async def _replay(self, call: PreparedCall, scope: CallScope) -> LLMResult[Any]:
        recording = await self.repository.find_recording(scope.tenant_id, call.request_hash)
        if recording is None:
            instruments().llm_errors.add(
                1, {"prompt_kind": call.template.kind, "provider": "replay", "reason": "missing"}
            )
            raise ReplayMissingError(call.template.key, call.request_hash, scope.tenant_id)
        try:
            value = call.template.validate_output(call.inputs, recording.response)
        except ValueError as exc:  # pydantic.ValidationError is a ValueError too
            raise LLMOutputError(
                call.template.kind, 0, f"recorded answer no longer validates: {exc}"
            ) from exc
        record = call_record(call, scope, "replay", recording.model, "replayed", value, Attempts())
        await self._recorder.save(record, 0.0)
        return result_of(value, "replay", record, 0.0)


class _Watched:
    """A caller's sink that notes whether anything reached it."""

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self.sent = False

    async def __call__(self, text: str) -> None:
        if text:
            self.sent = True
            await self._sink(text)

    async def words_of(self, text: str) -> None:
        """Offline, replayed or not streamed by the server: the answer's words, now that it is final (all at
        once to a sink that takes several chunks together)."""
        pieces = [w for w in words(text) if w]
        if not pieces:
            return
        if isinstance(self._sink, ChunkBatcher):
            self.sent = True
            await self._sink.send_all(pieces)
            return
        for word in pieces:
            await self(word)
