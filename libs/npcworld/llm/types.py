"""Value types of the LLM layer: a provider's raw reply, the result callers get, and call outcomes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

__all__ = ["OFFLINE_MODEL", "ChatParams", "ChatReply", "LLMResult", "Outcome", "ProviderName"]

T = TypeVar("T", bound=BaseModel)
ProviderName = Literal["openai", "offline", "replay"]
Outcome = Literal["ok", "malformed", "error", "budget_fallback", "outage_fallback", "replayed"]
# The model label recorded for answers of the offline provider (bump with its behaviour).
OFFLINE_MODEL = "npcworld-offline-1"


@dataclass(frozen=True)
class ChatParams:
    """What a chat provider needs besides the messages."""

    prompt: str
    temperature: float
    max_tokens: int
    response_format: dict[str, Any] | None


@dataclass(frozen=True)
class ChatReply:
    """A provider's raw answer: the text and the tokens it cost."""

    text: str
    tokens_in: int
    tokens_out: int


@dataclass(frozen=True)
class LLMResult(Generic[T]):
    """A validated answer and where it came from.

    ``provider`` is ``openai`` (a live model), ``offline`` (this project's deterministic cognition:
    the default, a budget fallback or an outage fallback; ``outcome`` says which) or ``replay``
    (the recorded answer of an earlier run).
    """

    value: T
    provider: ProviderName
    model: str
    prompt: str
    request_hash: str
    outcome: Outcome
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
