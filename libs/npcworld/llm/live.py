"""Live calls: bounded attempts against a chat provider, with backoff, the circuit breaker and
re-asking (with the reason) when the output does not validate."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from npcworld.llm.backoff import Backoff
from npcworld.llm.breaker import CircuitBreaker
from npcworld.llm.errors import CircuitOpenError, LLMOutputError, LLMRequestError, ProviderUnavailableError
from npcworld.llm.ports import ChatProvider
from npcworld.llm.prompts import Message, PromptTemplate
from npcworld.llm.streaming import STREAMED_FIELDS, ReplyFieldReader, current_sink
from npcworld.llm.structured import InvalidOutputError, parse_output
from npcworld.llm.types import ChatParams, ChatReply
from npcworld.telemetry import instruments

__all__ = ["Attempts", "LiveCaller"]

_ECHO_CHARS = 4000


@dataclass
class Attempts:
    """How a live call went: the value, or the error that ended it; tokens spent on every attempt."""

    value: BaseModel | None = None
    error: Exception | None = None
    text: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    attempts: int = 0


def _retry_messages(messages: list[Message], text: str, reason: str) -> list[Message]:
    return [
        *messages,
        {"role": "assistant", "content": text[:_ECHO_CHARS]},
        {
            "role": "user",
            "content": f"That answer is invalid ({reason}). Reply with the corrected JSON object only.",
        },
    ]


class LiveCaller:
    """Runs one prompt against a provider: at most ``1 + max_retries`` attempts, concurrency-bounded."""

    def __init__(
        self,
        provider: ChatProvider,
        breaker: CircuitBreaker,
        backoff: Backoff,
        max_retries: int,
        *,
        concurrency: int = 16,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.provider = provider
        self.breaker = breaker
        self._backoff = backoff
        self._max_retries = max_retries
        self._slots = asyncio.Semaphore(concurrency)
        self._sleep = sleep

    async def call(
        self,
        template: PromptTemplate[Any, Any],
        inputs: BaseModel,
        messages: list[Message],
        params: ChatParams,
    ) -> Attempts:
        """Try until the output validates, retries run out, the breaker opens or the request is refused."""
        result = Attempts()
        conversation = messages
        invalid: str | None = None
        for attempt in range(1, self._max_retries + 2):
            try:
                self.breaker.before_call()
            except CircuitOpenError as exc:
                result.error = exc
                return result
            result.attempts = attempt
            try:
                async with self._slots:
                    reply = await self._ask(template, conversation, params)
            except ProviderUnavailableError as exc:
                self.breaker.record_failure(str(exc))
                self._count_error(template, "unavailable")
                result.error, invalid = exc, None
                if attempt <= self._max_retries and self.breaker.state != "open":
                    await self._sleep(self._backoff.delay(attempt, exc.retry_after))
                continue
            except LLMRequestError as exc:
                self.breaker.record_success()  # the server is up; it refused this request
                self._count_error(template, "refused")
                result.error = exc
                return result
            self.breaker.record_success()
            result.text = reply.text
            result.tokens_in += reply.tokens_in
            result.tokens_out += reply.tokens_out
            try:
                result.value = parse_output(template, inputs, reply.text)
                result.error = None
                return result
            except InvalidOutputError as exc:
                self._count_error(template, "malformed")
                invalid = str(exc)
                conversation = _retry_messages(messages, reply.text, invalid)
        if invalid is not None:
            result.error = LLMOutputError(template.kind, result.attempts, invalid)
        return result

    async def _ask(self, template: PromptTemplate[Any, Any], conversation: list[Message],
                   params: ChatParams) -> ChatReply:
        """One request; streamed when the caller set a sink and the provider can stream (the sink then gets
        the streamed field's text as it arrives: each attempt's, as a preview of the answer)."""
        sink, field = current_sink(), STREAMED_FIELDS.get(template.kind)
        stream = getattr(self.provider, "chat_stream", None)
        if sink is None or field is None or stream is None:
            return await self.provider.chat(conversation, params)
        reader = ReplyFieldReader(field)

        async def on_text(piece: str) -> None:
            await sink(reader.feed(piece))

        reply: ChatReply = await stream(conversation, params, on_text)
        return reply

    def _count_error(self, template: PromptTemplate[Any, Any], reason: str) -> None:
        instruments().llm_errors.add(
            1, {"prompt_kind": template.kind, "provider": self.provider.name, "reason": reason}
        )
