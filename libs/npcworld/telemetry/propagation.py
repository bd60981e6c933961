"""W3C trace context carried in event envelopes and Kafka headers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from opentelemetry import context as otel_context
from opentelemetry import propagate

from npcworld.contracts import TraceContext

__all__ = ["context_from_headers", "context_from_trace", "current_trace", "kafka_headers"]


def current_trace() -> TraceContext:
    """The active span's context, to be stored in a new event's envelope."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return TraceContext(traceparent=carrier.get("traceparent"), tracestate=carrier.get("tracestate"))


def kafka_headers(trace: TraceContext, extra: Iterable[tuple[str, bytes]] = ()) -> list[tuple[str, bytes]]:
    """Kafka message headers for an event: its trace context plus ``extra``."""
    headers = [(k, v.encode()) for k, v in trace.model_dump().items() if v]
    headers.extend(extra)
    return headers


def context_from_headers(headers: Sequence[tuple[str, bytes]] | None) -> otel_context.Context:
    """The remote parent context found in Kafka headers (empty context when there is none)."""
    carrier = {k: v.decode(errors="replace") for k, v in headers or () if k in ("traceparent", "tracestate")}
    return propagate.extract(carrier)


def context_from_trace(trace: TraceContext) -> otel_context.Context:
    """The parent context stored in an envelope (used by replay and by in-process handling)."""
    carrier = {k: v for k, v in trace.model_dump().items() if v}
    return propagate.extract(carrier)
