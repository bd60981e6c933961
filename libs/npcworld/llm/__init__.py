"""The LLM layer: versioned prompts, the OpenAI-compatible and offline providers, retries, circuit
breaker, budgets, call recording and replay. Services call ``LLMClient.complete`` through the ``LLM`` port."""

from npcworld.llm.backoff import Backoff, parse_retry_after
from npcworld.llm.breaker import CircuitBreaker
from npcworld.llm.budgets import Exhaustion, exhausted
from npcworld.llm.client import LLMClient
from npcworld.llm.errors import (
    CircuitOpenError,
    LLMOutputError,
    LLMRequestError,
    ProviderUnavailableError,
    ReplayMissingError,
)
from npcworld.llm.factory import build_llm
from npcworld.llm.live import LiveCaller
from npcworld.llm.offline import OfflineCognition, OfflineLLM
from npcworld.llm.openai_provider import OpenAIProvider
from npcworld.llm.ports import LLM, ChatProvider
from npcworld.llm.repository import BudgetUsage, CallRecord, LLMCallRepository, Recording
from npcworld.llm.request import PreparedCall, prepare, request_hash
from npcworld.llm.settings import LLMSettings, load_llm_settings
from npcworld.llm.types import OFFLINE_MODEL, ChatParams, ChatReply, LLMResult, Outcome, ProviderName

__all__ = [
    "LLM",
    "OFFLINE_MODEL",
    "Backoff",
    "BudgetUsage",
    "CallRecord",
    "ChatParams",
    "ChatProvider",
    "ChatReply",
    "CircuitBreaker",
    "CircuitOpenError",
    "Exhaustion",
    "LLMCallRepository",
    "LLMClient",
    "LLMOutputError",
    "LLMRequestError",
    "LLMResult",
    "LLMSettings",
    "LiveCaller",
    "OfflineCognition",
    "OfflineLLM",
    "OpenAIProvider",
    "Outcome",
    "PreparedCall",
    "ProviderName",
    "ProviderUnavailableError",
    "Recording",
    "ReplayMissingError",
    "build_llm",
    "exhausted",
    "load_llm_settings",
    "parse_retry_after",
    "prepare",
    "request_hash",
]
