"""Ports of the LLM layer: the ``LLM`` services depend on and the ``ChatProvider`` behind it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from npcworld.llm.prompts import Message
from npcworld.llm.types import ChatParams, ChatReply, LLMResult

__all__ = ["LLM", "ChatProvider"]

T = TypeVar("T", bound=BaseModel)


class LLM(Protocol):
    """What a service calls; ``LLMClient`` in production, ``OfflineLLM`` in unit tests."""

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
        """Answer prompt ``kind`` for ``inputs`` with a validated ``output_model``."""
        ...


class ChatProvider(Protocol):
    """A chat-completions endpoint. Raises ``ProviderUnavailableError`` for failures worth a retry
    (with ``retry_after`` when the server named one) and ``LLMRequestError`` for refused requests."""

    name: str
    model: str

    async def chat(self, messages: list[Message], params: ChatParams) -> ChatReply:
        """Send one request and return the raw text of the first choice."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...
