"""Building the LLM layer from settings and a connection pool (a service's composition root calls this)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from psycopg_pool import AsyncConnectionPool

from npcworld.llm.backoff import Backoff
from npcworld.llm.breaker import CircuitBreaker
from npcworld.llm.client import LLMClient
from npcworld.llm.live import LiveCaller
from npcworld.llm.openai_provider import OpenAIProvider
from npcworld.llm.ports import ChatProvider
from npcworld.llm.repository import LLMCallRepository
from npcworld.llm.settings import LLMSettings

__all__ = ["build_llm"]

logger = logging.getLogger(__name__)


def build_llm(
    settings: LLMSettings,
    pool: AsyncConnectionPool,
    *,
    provider: ChatProvider | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> LLMClient:
    """An ``LLMClient`` for ``settings``: the OpenAI-compatible provider when configured, else offline.

    Args:
        settings: the service's settings (they extend ``LLMSettings``).
        pool: the service's PostgreSQL pool (call records and budgets; migrations applied).
        provider: a chat provider to use instead of the one the settings describe.
        sleep: how backoff waits (tests pass a recorder); clock: the breaker's clock.
    """
    live: LiveCaller | None = None
    if provider is None and settings.provider == "openai":
        provider = OpenAIProvider(
            model=settings.llm_model,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key,
            timeout_s=settings.llm_timeout_s,
        )
    if provider is not None:
        breaker = CircuitBreaker(
            provider.name, settings.llm_breaker_failures, settings.llm_breaker_reset_s, clock=clock
        )
        backoff = Backoff(settings.llm_backoff_base_s, settings.llm_backoff_max_s)
        live = LiveCaller(
            provider,
            breaker,
            backoff,
            settings.llm_max_retries,
            concurrency=settings.llm_max_concurrency,
            sleep=sleep,
        )
    logger.info(
        "LLM layer: provider=%s model=%s mode=%s",
        provider.name if provider else "offline",
        provider.model if provider else "-",
        settings.llm_mode,
    )
    return LLMClient(LLMCallRepository(pool), settings, live=live)
