"""One request is one trace: the trace context rides in the envelope and the Kafka headers."""

from __future__ import annotations

import asyncio
import uuid

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from psycopg_pool import AsyncConnectionPool

from npcworld.outbox import OutboxRelay
from tests.infra import BrokerForTests
from tests.integration import tally_app
from tests.polling import eventually


async def test_the_consumer_span_continues_the_trace_of_the_request_that_appended_the_event(
    pool: AsyncConnectionPool, database_url: str, broker: BrokerForTests
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    tracer = trace.get_tracer("test")
    await tally_app.prepare(database_url)
    world, npc = uuid.uuid4().hex, f"t-{uuid.uuid4().hex[:6]}"
    with tracer.start_as_current_span("POST /v1/worlds/.../perceptions") as request_span:
        async with pool.connection() as conn:
            await tally_app.append_observations(conn, world, [(npc, "traced")])
    trace_id = request_span.get_span_context().trace_id
    async with pool.connection() as conn:
        row = await (
            await conn.execute("SELECT event_id::text FROM events WHERE npc_id = %s", (npc,))
        ).fetchone()
    assert row is not None
    event_id = row[0]
    consumer = f"trace-{uuid.uuid4().hex[:6]}"
    stop = asyncio.Event()
    tasks = [asyncio.create_task(OutboxRelay(pool, broker.bootstrap).run(stop)),
             asyncio.create_task(tally_app.make_loop(pool, broker.bootstrap, consumer).run(stop))]

    def consumer_spans() -> list[object]:
        # The shared broker also carries other tests' events: pick the span of ours.
        return [s for s in exporter.get_finished_spans()
                if s.name == f"{consumer} ObservationMade"
                and (s.attributes or {}).get("npcworld.event_id") == event_id]

    async def probe() -> list[object]:
        return consumer_spans()

    try:
        spans = await eventually(probe, lambda found: len(found) >= 1)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    span = spans[0]
    assert span.context.trace_id == trace_id  # type: ignore[attr-defined]
    assert span.parent is not None and span.parent.span_id == request_span.get_span_context().span_id  # type: ignore[attr-defined]
