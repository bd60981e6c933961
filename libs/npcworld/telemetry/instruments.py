"""The metrics every service reports, created once on the global meter provider."""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from functools import cache
from typing import Any, Protocol

from opentelemetry import metrics, trace

__all__ = ["Instruments", "instruments", "tracer"]

# Histogram buckets in seconds (the SDK's default boundaries, 0 to 10,000, suit milliseconds: every
# handler would land in the first bucket and a p95 would say nothing).
HANDLER_BUCKETS_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
LLM_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0)


class _Breaker(Protocol):
    """What the breaker gauge reads of a circuit breaker (``npcworld.llm.breaker.CircuitBreaker``)."""

    name: str

    @property
    def state(self) -> str: ...

    def snapshot(self) -> dict[str, Any]: ...


class Instruments:
    """Counters, gauges and histograms for event handling, relaying, world clocks and LLM calls."""

    def __init__(self, meter: metrics.Meter) -> None:
        self.events_handled = meter.create_counter(
            "npcworld.events.handled", unit="{event}", description="events handled by a consumer"
        )
        self.events_skipped = meter.create_counter(
            "npcworld.events.duplicates", unit="{event}", description="redelivered events skipped"
        )
        self.dead_letters = meter.create_counter(
            "npcworld.events.dead_lettered",
            unit="{event}",
            description="events sent to the dead-letter topic",
        )
        self.retries = meter.create_counter(
            "npcworld.events.retries", unit="{attempt}", description="handler retries after a failure"
        )
        self.handler_duration = meter.create_histogram(
            "npcworld.handler.duration",
            unit="s",
            description="time to handle one event, DB commit included",
            explicit_bucket_boundaries_advisory=HANDLER_BUCKETS_S,
        )
        self.lag: dict[tuple[str, str, int], int] = {}
        meter.create_observable_gauge(
            "npcworld.consumer.lag",
            callbacks=[self._observe_lag],
            unit="{message}",
            description="messages between a consumer's position and the partition end",
        )
        self.published = meter.create_counter(
            "npcworld.outbox.published", unit="{event}", description="events the relay published to Kafka"
        )
        # Seconds since the oldest event still in the outbox was recorded (0: empty); set by the relay. It
        # publishes every committed row at once, so this grows only while the relay or the broker is away or
        # slow.
        self.outbox_oldest_age = 0.0
        meter.create_observable_gauge(
            "npcworld.outbox.oldest_unpublished_age",
            callbacks=[self._observe_outbox_age],
            unit="s",
            description="age of the oldest event not yet published to Kafka (0 when the outbox is empty)",
        )
        self.appended = meter.create_counter(
            "npcworld.events.appended", unit="{event}", description="events appended to the event store"
        )
        # LLM calls: attributes prompt_kind, provider, outcome, world_id (and npc_id on calls and tokens).
        self.llm_calls = meter.create_counter(
            "npcworld.llm.calls", unit="{call}", description="LLM calls by prompt kind, provider and outcome"
        )
        self.llm_tokens_in = meter.create_counter(
            "npcworld.llm.tokens.in", unit="{token}", description="prompt tokens sent to LLM providers"
        )
        self.llm_tokens_out = meter.create_counter(
            "npcworld.llm.tokens.out", unit="{token}", description="completion tokens received"
        )
        self.llm_latency = meter.create_histogram(
            "npcworld.llm.latency",
            unit="s",
            description="time to answer one LLM call, retries included",
            explicit_bucket_boundaries_advisory=LLM_BUCKETS_S,
        )
        self.llm_errors = meter.create_counter(
            "npcworld.llm.errors", unit="{attempt}", description="failed LLM attempts by prompt and reason"
        )
        self.llm_fallbacks = meter.create_counter(
            "npcworld.llm.fallbacks", unit="{call}", description="calls answered offline (budget or outage)"
        )
        # Model calls and retrievals made while a consumer held its transaction open (npcworld.slow_calls).
        self.slow_calls_in_transaction = meter.create_counter(
            "npcworld.slow_calls.in_transaction", unit="{call}",
            description="model calls and retrievals made inside a consumer transaction (should be none)",
        )
        self.llm_breaker_opened = meter.create_counter(
            "npcworld.llm.breaker.opened", unit="{event}", description="times a provider circuit opened"
        )
        # Every live breaker of the process registers itself; the gauge reads their state at collection.
        self.breakers: weakref.WeakSet[_Breaker] = weakref.WeakSet()
        meter.create_observable_gauge(
            "npcworld.llm.breaker.open",
            callbacks=[self._observe_breakers],
            unit="{breaker}",
            description="provider circuit breakers not closed (open, or half-open until a trial succeeds)",
        )
        # World clocks: no per-world attribute (cardinality); mode is stepped or realtime.
        self.world_steps = meter.create_counter(
            "npcworld.world.steps", unit="{step}", description="world clock steps committed, by clock mode"
        )
        # Clocks that are running and not past their end, as the ticker last saw them; set by the ticker
        # (None, and not reported, in processes that run no ticker).
        self.clocks_running: int | None = None
        meter.create_observable_gauge(
            "npcworld.world.clocks_running",
            callbacks=[self._observe_clocks],
            unit="{world}",
            description="world clocks running and not past their end, as the ticker last counted them",
        )

    def _observe_outbox_age(self, _options: metrics.CallbackOptions) -> Iterable[metrics.Observation]:
        yield metrics.Observation(self.outbox_oldest_age)

    def _observe_breakers(self, _options: metrics.CallbackOptions) -> Iterable[metrics.Observation]:
        not_closed: dict[str, int] = {}
        for breaker in list(self.breakers):
            not_closed[breaker.name] = not_closed.get(breaker.name, 0) + (breaker.state != "closed")
        for provider, count in not_closed.items():
            yield metrics.Observation(count, {"provider": provider})

    def _observe_clocks(self, _options: metrics.CallbackOptions) -> Iterable[metrics.Observation]:
        if self.clocks_running is not None:
            yield metrics.Observation(self.clocks_running)

    def _observe_lag(self, _options: metrics.CallbackOptions) -> Iterable[metrics.Observation]:
        for (consumer, topic, partition), lag in list(self.lag.items()):
            yield metrics.Observation(lag, {"consumer": consumer, "topic": topic, "partition": partition})


@cache
def instruments() -> Instruments:
    """The process-wide instruments (created lazily so the SDK can be installed first)."""
    return Instruments(metrics.get_meter("npcworld"))


def tracer() -> trace.Tracer:
    """The project's tracer."""
    return trace.get_tracer("npcworld")
