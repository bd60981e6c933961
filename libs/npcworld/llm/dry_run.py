"""Re-running a recorded model call as a dry run: its template inputs (or its rendered messages) answered by
another model or with the current prompt version, and nothing recorded, charged or appended.

The offline provider answers from a template's inputs, never from the prompt's text, so it needs the inputs
the call recorded (calls recorded before migration 0106 have none) and gives the same answer whatever the
prompt version. A live model gets either the current template rendered from the recorded inputs, or the very
messages that were sent; one attempt, without retries, the breaker or a fallback, so what it says is shown.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pydantic
from pydantic import BaseModel

from npcworld.errors import NpcworldError
from npcworld.llm.errors import LLMRequestError, ProviderUnavailableError
from npcworld.llm.offline import OfflineCognition
from npcworld.llm.ports import ChatProvider
from npcworld.llm.prompts import Message, PromptTemplate, get_prompt
from npcworld.llm.structured import InvalidOutputError, json_object, parse_output, response_format
from npcworld.llm.types import OFFLINE_MODEL, ChatParams

__all__ = ["DryRun", "DryRunError", "PromptChoice", "RecordedCall", "dry_run"]

PromptChoice = Literal["recorded", "current"]


class DryRunError(NpcworldError):
    """The call cannot be re-run as asked (the message says why)."""


@dataclass(frozen=True)
class RecordedCall:
    """What a re-run takes from a recorded call."""

    kind: str
    version: int
    messages: list[Message]
    inputs: dict[str, Any] | None
    parameters: dict[str, Any]


@dataclass(frozen=True)
class DryRun:
    """A re-run's answer (or the error that ended it) and what it cost."""

    prompt: str
    provider: str
    model: str
    messages: list[Message]
    answer: dict[str, Any] | None
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0


def _inputs(template: PromptTemplate[Any, Any], call: RecordedCall) -> BaseModel:
    if call.inputs is None:
        raise DryRunError(f"this {call.kind} call was recorded without its template inputs (before they were"
                          " kept): it can be re-run with its recorded messages on a live model only")
    try:
        validated: BaseModel = template.input_model.model_validate(call.inputs)
    except pydantic.ValidationError as exc:
        problem = exc.errors()[0]["msg"]
        raise DryRunError(f"the recorded inputs no longer fit {template.key}: {problem}") from exc
    return validated


async def dry_run(
    call: RecordedCall,
    provider: ChatProvider | None,
    prompt: PromptChoice = "recorded",
    clock: Callable[[], float] = time.perf_counter,
) -> DryRun:
    """Answer ``call`` again with ``provider`` (None: the offline provider).

    Args:
        call: the recorded call.
        provider: a live chat provider asking for the model to try, or None for the offline provider.
        prompt: ``recorded``: the messages that were sent; ``current``: the kind's current template
            rendered from the recorded inputs (the offline provider always answers from the inputs).

    Raises:
        DryRunError: the call lacks what the re-run needs, or its inputs no longer fit the template.
    """
    template = get_prompt(call.kind)
    started = clock()
    if provider is None:
        known = _inputs(template, call)
        value = await asyncio.to_thread(OfflineCognition().answer, template, known)
        return DryRun(template.key, "offline", OFFLINE_MODEL, template.render(known),
                      value.model_dump(mode="json"), latency_ms=(clock() - started) * 1000)
    return await _live(template, call, provider, prompt, clock)


async def _live(
    template: PromptTemplate[Any, Any], call: RecordedCall, provider: ChatProvider, prompt: PromptChoice,
    clock: Callable[[], float],
) -> DryRun:
    started = clock()
    inputs = _inputs(template, call) if prompt == "current" or call.inputs is not None else None
    if prompt == "current":
        assert inputs is not None
        messages, key = template.render(inputs), template.key
    else:
        messages, key = call.messages, f"{call.kind}@v{call.version}"
    params = ChatParams(
        prompt=key, temperature=float(call.parameters.get("temperature", template.temperature)),
        max_tokens=int(call.parameters.get("max_tokens", template.max_tokens)),
        response_format=response_format(template, str(call.parameters.get("response_format", "json_object"))))
    try:
        reply = await provider.chat(messages, params)
    except (ProviderUnavailableError, LLMRequestError) as exc:
        return DryRun(key, provider.name, provider.model, messages, None, str(exc),
                      latency_ms=(clock() - started) * 1000)
    answer, error = _answer(template, inputs, reply.text)
    return DryRun(key, provider.name, provider.model, messages, answer, error, reply.tokens_in,
                  reply.tokens_out, (clock() - started) * 1000)


def _answer(
    template: PromptTemplate[Any, Any], inputs: BaseModel | None, text: str
) -> tuple[dict[str, Any] | None, str | None]:
    """The validated answer (the template's cross-checks too when the inputs are known), or why not."""
    try:
        if inputs is not None:
            return parse_output(template, inputs, text).model_dump(mode="json"), None
        return template.output_model.model_validate(json_object(text)).model_dump(mode="json"), None
    except (InvalidOutputError, pydantic.ValidationError) as exc:
        return None, f"the answer does not validate: {str(exc)[:300]} (text: {text[:300]!r})"
