"""``OfflineLLM``: the ``LLM`` port answered in memory by the offline provider (no database); the fake
services use in unit tests and in-process tools."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from npcworld.llm.offline.cognition import OfflineCognition
from npcworld.llm.request import prepare
from npcworld.llm.types import OFFLINE_MODEL, LLMResult
from npcworld.slow_calls import slow_call

__all__ = ["OfflineLLM"]

T = TypeVar("T", bound=BaseModel)


class OfflineLLM:
    """Answers every call with the offline provider; ``calls`` lists ``(kind, inputs)`` in order."""

    def __init__(self) -> None:
        self._cognition = OfflineCognition()
        self.calls: list[tuple[str, BaseModel]] = []

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
        """Answer ``kind`` offline (same validation as ``LLMClient``, nothing recorded)."""
        slow_call("llm", kind)
        call = prepare(kind, inputs, output_model, model=OFFLINE_MODEL, parameters={})
        self.calls.append((kind, call.inputs))
        value = cast(T, self._cognition.answer(call.template, call.inputs))
        return LLMResult(value, "offline", OFFLINE_MODEL, call.template.key, call.request_hash, "ok")
