"""The one consumer loop every service runs: decode, gather, trace, apply exactly once, then commit offsets.

Handlers are two-phase (``npcworld.messaging.routes``): a poll's gather steps run before its transaction
opens, the apply steps inside it. The stretch in which a transaction is open is marked
(``npcworld.slow_calls.in_transaction``), so a model call or retrieval made there is logged and counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from opentelemetry.trace import SpanKind
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from npcworld.cause import handling
from npcworld.contracts import EVENT_TYPES, Envelope, decode_envelope
from npcworld.errors import PermanentError
from npcworld.eventstore import EventStore, UnitOfWork, claims
from npcworld.lanes import LANES, Lane, WorldFirst, handling_lane, rank
from npcworld.messaging.dead_letter import DeadLetterer
from npcworld.messaging.doorbell import Doorbell, doorbell_enabled
from npcworld.messaging.heartbeat import Heartbeat
from npcworld.messaging.kafka import make_consumer, make_producer, stop_consumer
from npcworld.messaging.lanes import INGEST_SHARE, IngestPacer, LaneQueue, lane_of
from npcworld.messaging.offsets import OffsetCommits
from npcworld.messaging.reconnect import DEPENDENCY_ERRORS, Backoff
from npcworld.messaging.record import KafkaRecord, header
from npcworld.messaging.retry import TRANSIENT_ERRORS, RetryPolicy
from npcworld.messaging.routes import Route, Routes
from npcworld.messaging.segments import gather_segments, record_type
from npcworld.projection import Projection
from npcworld.slow_calls import in_transaction
from npcworld.telemetry import context_from_headers, instruments, tracer

__all__ = ["ConsumerLoop"]

logger = logging.getLogger(__name__)

# Fetched records a consumer may hold unhandled (in polls of ``max_records``) before it stops fetching. Large:
# while fetching is paused, the world's events wait in the broker behind player traffic (the queue is what
# lets them overtake it), so this only bounds memory under sustained overload (~20,000 records, tens of MB).
_WAITING_POLLS = 40
# How long a poll waits right after a quiet consumer resumed fetching.
_WOKEN_WAIT_MS = 60
# Inherited events a consumer folds in one transaction ahead of a fork's WorldForked.
_FORK_CHUNK = 2000

D = TypeVar("D")
Gathered = Mapping[uuid.UUID, object]


class ConsumerLoop(Generic[D]):
    """Consumes the topics its handlers need and applies each event exactly once.

    Per partition batch: one database transaction, a savepoint per event. Each event's id is
    recorded in ``processed_events`` in the same transaction as the handler's writes and new
    events, so redelivery is harmless. Offsets are committed to Kafka only after the database
    commit. Transient failures roll the batch back and retry it with backoff; permanent ones,
    and handlers that keep failing, send the event to the dead-letter topic. Before a batch's
    transaction opens, its routes' gather steps run (``npcworld.messaging.routes``), and each apply step
    gets what was gathered for its event.
    """

    def __init__(
        self,
        name: str,
        routes: Routes[D],
        deps: D,
        *,
        projection: Projection | None = None,
        pool: AsyncConnectionPool,
        bootstrap: str,
        policy: RetryPolicy | None = None,
        max_records: int = 500,
        heartbeat_seconds: float = 2.0,
        events_per_transaction: int | None = None,
        world_first: WorldFirst | None = None,
        ingest_share: float = INGEST_SHARE,
        beside: Iterable[Lane] = (),
        paces_steps: bool = True,
        claims_fold_seconds: float = 30.0,
        claims_keep_seconds: float = claims.KEEP_SECONDS,
    ) -> None:
        unknown = set(routes) - set(EVENT_TYPES)
        if unknown:
            raise ValueError(f"routes for unknown event types: {sorted(unknown)}")
        if projection is not None and projection.consumer != name:
            raise ValueError(f"projection of {projection.consumer!r} given to consumer {name!r}")
        self.name = name
        self.routes = routes
        self.projection = projection
        self.appliers = projection.appliers if projection else {}
        self.deps = deps
        self.pool = pool
        self.bootstrap = bootstrap
        self.policy = policy or RetryPolicy()
        self.max_records = max_records
        # None: a poll is one transaction. A service whose handlers wait on a model takes 1, so no transaction
        # that has written stays open across another event's model call (the relay waits for open writers).
        self.events_per_transaction = events_per_transaction
        self.heartbeat_seconds = heartbeat_seconds
        # Told whether events ahead of ingest wait here, for work this process does outside the loop.
        self.world_first = world_first
        # The share of this consumer's time ingest may take while the world's events keep coming.
        self.ingest_share = ingest_share
        # Lanes whose batch is handled beside the other lanes' (for handlers that wait on other services,
        # whose batch of that lane would otherwise hold the world's next event for as long as those calls
        # take: planning's ingest reactions, dialogue's replies to players). One such batch at a time; the
        # handlers must be safe to run concurrently for different events (planning locks each NPC); what a
        # batch gathers is its own.
        unknown_lanes = set(beside) - set(LANES)
        if unknown_lanes or "world" in set(beside):
            raise ValueError(f"only other lanes than the world's are handled beside it, got {sorted(beside)}")
        self.beside = frozenset(rank(lane) for lane in beside)
        # False: stepped clocks do not wait for this consumer (see ``Heartbeat``).
        self.paces_steps = paces_steps
        # How often this consumer's settled claims are folded into its watermark, and how long they stay rows.
        self.claims_fold_seconds = claims_fold_seconds
        self.claims_keep_seconds = claims_keep_seconds
        self.store = EventStore()
        # The types read from Kafka: a projection's appended-only types never come that way.
        own = projection.appended_only if projection is not None else frozenset()
        self.consumed = frozenset({*routes, *(t for t in self.appliers if t not in own)})
        self._writers = frozenset({*routes, *self.appliers})  # types whose apply steps may write here
        self.topics = sorted({EVENT_TYPES[t].topic.name for t in self.consumed})
        self.started = asyncio.Event()
        self._positions: dict[TopicPartition, int] = {}
        self._stop: asyncio.Event | None = None
        self._doorbell: Doorbell | None = None
        self.quiet = False  # paused, waiting for the relay's doorbell

    async def run(self, stop: asyncio.Event) -> None:
        """Consume until ``stop`` is set; the last batch is finished, unless it is waiting to retry a
        transient failure (a database that is gone): then it is left uncommitted, to be redelivered.

        A lost Postgres or broker never ends the loop: it backs off (0.5 s doubling to 5 s, jittered) and
        starts its Kafka consumer again when they are back (``npcworld.messaging.reconnect``). The heartbeat
        is withdrawn only on a clean stop: a loop waiting for the broker still owes its events."""
        self._stop = stop
        backoff = Backoff(f"consumer {self.name}")
        producer = await backoff.call(self._started_producer, stop)
        if producer is None:
            return
        dead = DeadLetterer(self.name, producer)
        types = set(self.consumed)
        heartbeat = Heartbeat(self.pool, self.name, types, seconds=self.heartbeat_seconds,
                              paces_steps=self.paces_steps)
        folding = asyncio.create_task(self._fold_claims(stop), name=f"{self.name}-claims")
        conninfo = self.pool.conninfo
        self._doorbell = (Doorbell(conninfo, self.topics, self.name)
                          if doorbell_enabled() and isinstance(conninfo, str) else None)
        listening = (asyncio.create_task(self._doorbell.run(stop), name=f"{self.name}-doorbell")
                     if self._doorbell is not None else None)
        try:
            await backoff.call(heartbeat.start, stop)
            if stop.is_set():
                return
            while not stop.is_set():
                try:
                    await self._run_generation(heartbeat, dead, stop, backoff)
                except DEPENDENCY_ERRORS as exc:
                    self.started.clear()
                    await backoff.failed(exc, stop)
        finally:
            for task in (folding, listening):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            await heartbeat.stop()
            await producer.stop()
            logger.info("consumer %s stopped", self.name)

    async def _fold_claims(self, stop: asyncio.Event) -> None:
        """Every ``claims_fold_seconds``, fold this consumer's settled claims into its watermark
        (``npcworld.eventstore.claims``). A failed round is retried at the next one (said once)."""
        failing = False
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.claims_fold_seconds)
            if stop.is_set():
                return
            try:
                async with self.pool.connection() as conn, conn.transaction():
                    await claims.fold(conn, self.name, {*self.routes, *self.appliers},
                                      keep_seconds=self.claims_keep_seconds)
            except Exception as exc:
                if not failing:
                    logger.warning("%s: folding claims failed (retried every %g s): %r", self.name,
                                   self.claims_fold_seconds, exc)
                failing = True
                continue
            failing = False

    async def _started_producer(self) -> AIOKafkaProducer:
        producer = make_producer(self.bootstrap, f"{self.name}-dlq")
        try:
            await producer.start()
        except BaseException:
            await producer.stop()
            raise
        return producer

    async def _run_generation(
        self, heartbeat: Heartbeat, dead: DeadLetterer, stop: asyncio.Event, backoff: Backoff
    ) -> None:
        # A new broker generation (the embedded broker is being replaced by an empty one): stop consuming,
        # wait for the new broker, then start a fresh consumer there (no stale positions, a new group
        # membership, offsets from the start).
        generation = await heartbeat.park(stop) if heartbeat.rotated.is_set() else heartbeat.current
        if stop.is_set():
            return
        consumer = await self._start_consumer()
        try:
            await heartbeat.adopt(generation)
            self._positions.clear()
            if self._doorbell is not None:
                self._doorbell.forget()
            self.started.set()
            backoff.succeeded()
            logger.info("consumer %s started on %s (broker generation %d)", self.name, self.topics,
                        generation)
            await self._consume(consumer, dead, stop, heartbeat.rotated)
        finally:
            await stop_consumer(consumer)

    async def _start_consumer(self) -> AIOKafkaConsumer:
        """A started consumer (a broker that is away raises: ``run`` backs off and tries again)."""
        consumer = make_consumer(self.bootstrap, self.name, self.topics, max_records=self.max_records)
        try:
            await consumer.start()
        except BaseException:
            await stop_consumer(consumer)
            raise
        return consumer

    async def _consume(
        self, consumer: AIOKafkaConsumer, dead: DeadLetterer, stop: asyncio.Event, rotated: asyncio.Event
    ) -> None:
        """Poll, then handle the best lane's records first (``npcworld.messaging.lanes``): with one lane only,
        each poll is handled whole, in store order, as one batch. Ingest is paced while the world is
        active; a batch of a lane in ``beside`` is handled beside the other lanes' batches."""
        queue: LaneQueue[KafkaRecord] = LaneQueue(self._is_work)
        pacer = IngestPacer(self.ingest_share)
        commits = OffsetCommits(self.name, consumer, self._positions.update)
        paused = False
        aside: _Aside | None = None  # the batch handled beside the others
        try:
            while not stop.is_set() and not rotated.is_set():
                if aside is not None and aside.task.done():
                    await self._finish(commits, queue, pacer, aside.records, aside.started, aside.task)
                    aside = None
                resting = await self._settle(consumer, paused)
                idle = resting and aside is None and not len(queue)
                woke = idle and await self._quiet(consumer, stop, rotated)
                if woke:
                    await self._settle(consumer, paused)  # resume what the ring named
                # Just woken: one fetch's answer is enough to tell (a ring's records are there already).
                wait_ms = _WOKEN_WAIT_MS if woke else self._wait_ms(queue, pacer, aside)
                batches = await consumer.getmany(timeout_ms=wait_ms, max_records=self.max_records)
                queue.add(batches)
                queue.keep_only(consumer.assignment())
                paused = self._flow(len(queue), paused)
                self._report_lag(consumer)
                busy = self.beside if aside is not None else frozenset()  # one batch beside at a time
                records = queue.take(self.max_records, ingest=pacer.wait() == 0, skip=busy)
                lane = lane_of(records[0]) if records else None  # a batch is of one lane
                self._tell((bool(records) and rank(lane) < rank("ingest")) or queue.urgent())
                if not records:
                    continue
                task = asyncio.create_task(self._handle_in_lane(records, lane, dead))
                if rank(lane) in self.beside:
                    aside = _Aside(task, records, time.monotonic(), rank(lane))
                    continue
                await self._finish(commits, queue, pacer, records, time.monotonic(), task)
        except _Abandoned:
            logger.warning("%s: stopping with a batch uncommitted; it will be redelivered", self.name)
        finally:
            if aside is not None:  # still running, or ended and not yet taken: its outcome is read either way
                await _end_aside(self.name, aside.task)
            await commits.settle()

    @staticmethod
    def _wait_ms(queue: LaneQueue[KafkaRecord], pacer: IngestPacer, aside: _Aside | None) -> int:
        """How long a poll may wait for records: briefly while a batch runs beside (to see it end; what else
        waits was taken), not at all while a chat's or the world's wait, until ingest's pace allows, else a
        fifth of a second."""
        if aside is not None:
            return 50
        if queue.urgent():
            return 0
        return min(200, int(pacer.wait() * 1000)) if len(queue) else 200

    async def _handle_in_lane(self, records: list[KafkaRecord], lane: str | None, dead: DeadLetterer) -> None:
        with handling_lane(lane):
            await self._process_batch(records, dead)

    async def _finish(
        self, commits: OffsetCommits, queue: LaneQueue[KafkaRecord], pacer: IngestPacer,
        records: list[KafkaRecord], started: float, task: asyncio.Task[None],
    ) -> None:
        """Wait for a batch's handling, then start committing what is safe (raises ``_Abandoned`` as handling
        did). The offset commit runs beside the next poll (``npcworld.messaging.offsets``): waiting for the
        broker's answer put a round trip in front of every poll's events."""
        await task
        pacer.handled(lane_of(records[0]), time.monotonic() - started)
        offsets = queue.done(records)
        self._tell(queue.urgent())
        await commits.send(offsets)

    async def _settle(self, consumer: AIOKafkaConsumer, hold: bool) -> bool:
        """Pause what needs no fetch: every partition while ``hold`` (see ``_flow``), else, with the relay's
        doorbell, the partitions read to their end (``npcworld.messaging.doorbell``); whether all rest."""
        if self._doorbell is not None:
            return await self._doorbell.settle(consumer, hold=hold)
        paused = consumer.paused()
        if hold and paused != consumer.assignment():
            consumer.pause(*consumer.assignment())
        elif not hold and paused:
            consumer.resume(*paused)
        return False

    async def _quiet(self, consumer: AIOKafkaConsumer, stop: asyncio.Event, rotated: asyncio.Event) -> bool:
        """Every partition rests and nothing is queued: sleep until the doorbell names one (or a recheck is
        due); True once woken."""
        if self._doorbell is None:
            return False
        self.quiet = True
        try:
            await self._doorbell.wait(consumer.assignment(), stop, rotated)
        finally:
            self.quiet = False
        return True

    def _tell(self, urgent: bool) -> None:
        if self.world_first is not None:
            self.world_first.busy(urgent)

    def _is_work(self, record: KafkaRecord) -> bool:
        """Whether this consumer handles the record's event type (by its header; without one, it may)."""
        kind = header(record, "event_type")
        return kind is None or kind in self.routes or kind in self.appliers

    def _flow(self, waiting: int, paused: bool) -> bool:
        """Whether to stop fetching: while ``waiting`` records exceed a few polls' worth, until under it."""
        bound = _WAITING_POLLS * self.max_records
        if waiting > bound and not paused:
            logger.warning("%s: %d fetched events wait to be handled; fetching paused until they drain",
                           self.name, waiting)
            return True
        if waiting <= bound and paused:
            logger.info("%s: fetching resumed", self.name)
            return False
        return paused

    async def _gather(self, records: list[KafkaRecord]) -> Gathered:
        """Run the gather steps of the batch's unprocessed events (not fork copies), outside a transaction;
        returns their results by event id. A gather that fails leaves its events' apply steps to work it out
        themselves (logged: they then call out inside the transaction)."""
        wanted = self.routes.gathering()
        events: dict[str, list[Envelope]] = {}
        for record in records:
            try:
                envelope = decode_envelope(record.value or b"")
            except PermanentError:
                continue
            if envelope.type in wanted and envelope.forked_from is None:
                events.setdefault(envelope.type, []).append(envelope)
        if not events:
            return {}
        try:
            async with self.pool.connection() as conn:
                ids = [e.event_id for es in events.values() for e in es]
                done = await claims.processed(conn, self.name, ids)
        except Exception:  # only the database being away: the transaction retries it with backoff
            logger.warning("%s: could not read what was processed; the batch is applied ungathered",
                           self.name, exc_info=True)
            return {}
        todo = [(self.routes[t], fresh) for t in self.routes if t in events
                if (fresh := [e for e in events[t] if e.event_id not in done])]
        if self.routes.gather_together:
            results = await asyncio.gather(*(self._gather_route(route, es) for route, es in todo))
        else:
            results = [await self._gather_route(route, es) for route, es in todo]
        return {event_id: value for result in results for event_id, value in result.items()}

    async def _gather_route(self, route: Route[D], events: Sequence[Envelope]) -> Gathered:
        assert route.gather is not None
        try:
            return await route.gather(events, self.deps, self.pool)
        except Exception:
            logger.warning("%s: gathering %d %s events failed; their handlers work it out themselves",
                           self.name, len(events), route.event_type, exc_info=True)
            return {}

    async def _process_batch(self, records: list[KafkaRecord], dead: DeadLetterer) -> None:
        """Gather, then apply the poll in transactions of ``events_per_transaction`` events (all in one by
        default); offsets are committed once for the poll. With ``Routes.gathers_read_writes`` a poll whose
        gathered events follow events that write state here is gathered and applied in segments
        (``npcworld.messaging.segments``), so each gather reads what the events before it wrote."""
        await self._fold_forks(records)
        wanted = self.routes.gathering()
        if not wanted or not self.routes.gathers_read_writes:
            await self._process_segment(records, dead, await self._gather(records) if wanted else {})
            return
        types = [record_type(r) for r in records]
        for lo, hi in gather_segments(types, wanted, self._writers):
            segment = records[lo:hi]
            await self._process_segment(segment, dead, await self._gather(segment))

    async def _fold_forks(self, records: list[KafkaRecord]) -> None:
        """Fold the inherited history of each fork whose WorldForked the poll holds into the read model, a
        chunk a transaction, before the poll's transaction folds what is left and claims the event: a long
        history never holds one transaction open (which would hold back the relay for every world). A failure
        here is left to the poll's transaction, which meets it again and retries or dead-letters the event."""
        if self.projection is None or not self.projection.inherited:
            return
        for record in records:
            if record_type(record) != "WorldForked":
                continue
            try:
                envelope = decode_envelope(record.value or b"")
                async with self.pool.connection() as conn:
                    while True:
                        async with conn.transaction():
                            if await claims.processed(conn, self.name, [envelope.event_id]):
                                break
                            if not await self.projection.fold_inherited(conn, envelope, limit=_FORK_CHUNK):
                                break
            except Exception:
                logger.warning("%s: folding a fork's history ahead of its WorldForked failed; left to the"
                               " event's own transaction", self.name, exc_info=True)

    async def _process_segment(
        self, records: list[KafkaRecord], dead: DeadLetterer, gathered: Gathered
    ) -> None:
        size = self.events_per_transaction or len(records) or 1
        for start in range(0, max(len(records), 1), size):
            await self._process_transaction(records[start:start + size], dead, gathered)

    async def _process_transaction(
        self, records: list[KafkaRecord], dead: DeadLetterer, gathered: Gathered
    ) -> None:
        """One transaction for these records; the careful per-event path only when something fails."""
        attempt = 0
        while True:
            try:
                async with self.pool.connection() as conn, _transaction_of(self.name):
                    try:
                        async with conn.transaction():
                            await self._fast_path(conn, records, gathered)
                    except TRANSIENT_ERRORS:
                        raise
                    except Exception:
                        # Something in the batch is poison or a handler failed: redo the batch with a
                        # savepoint per event so only the culprit is retried and dead-lettered.
                        async with conn.transaction():
                            for record in records:
                                await self._process_one(conn, record, dead, gathered)
                if attempt:
                    logger.info("%s: batch of %d done after %d retries", self.name, len(records), attempt)
                return
            except TRANSIENT_ERRORS as exc:
                attempt += 1
                instruments().retries.add(1, {"consumer": self.name, "kind": "transient"})
                # One line per outage, not one per retry (a database that is down fails every attempt).
                logger.log(logging.WARNING if attempt == 1 else logging.DEBUG,
                           "%s: transient failure (attempt %d), retrying batch of %d: %r",
                           self.name, attempt, len(records), exc)
                if self._stop is not None and self._stop.is_set():
                    raise _Abandoned from exc
                await self.policy.sleep(attempt)

    async def _fast_path(
        self, conn: AsyncConnection[Any], records: list[KafkaRecord], gathered: Gathered
    ) -> None:
        """Decode all, skip what was processed, apply the rest in order, then claim them in one statement."""
        relevant = [(r, e) for r in records if (e := decode_envelope(r.value or b"")).type in self.routes
                    or e.type in self.appliers]
        if not relevant:
            return
        ids = list(dict.fromkeys(e.event_id for _, e in relevant))
        done = await claims.processed(conn, self.name, ids)
        fresh = [i for i in ids if i not in done]
        pending = set(fresh)
        await self._before_handlers(conn, [e for _, e in relevant if e.event_id in pending])
        async with self._maybe_pipeline(conn, {e.type for _, e in relevant}):
            for record, envelope in relevant:
                labels = {"consumer": self.name, "event_type": envelope.type}
                if envelope.event_id not in pending:
                    instruments().events_skipped.add(1, labels)
                    continue
                pending.discard(envelope.event_id)
                started = time.perf_counter()
                with self._span(record, envelope), handling_lane(lane_of(record)):
                    await self._apply(conn, envelope, gathered.get(envelope.event_id))
                instruments().events_handled.add(1, labels)
                instruments().handler_duration.record(time.perf_counter() - started, labels)
        # Claimed last, in the same transaction: Postgres gives a transaction an id only at its first write,
        # and readers that take only what is older than every open writer (the event log's API and SSE,
        # webhooks, claim folds) wait for a transaction that has one. Another consumer that claimed one of
        # these meanwhile fails the unique key: the batch is then redone on the careful path, which skips
        # what was claimed.
        if fresh:
            await conn.execute(
                "INSERT INTO processed_events (consumer, event_id) SELECT %s, unnest(%s::uuid[])",
                (self.name, fresh),
            )
            if await claims.covered(conn, self.name, fresh):  # claimed meanwhile and then folded
                raise _ClaimedMeanwhile(f"{self.name}: an event of the batch was claimed meanwhile")

    async def _before_handlers(self, conn: AsyncConnection[Any], events: list[Envelope]) -> None:
        """Runs in a batch's transaction before the handlers of ``events`` (those not processed yet): a
        service whose handlers queue for streams queues for all of them here, in one order."""

    def _maybe_pipeline(self, conn: AsyncConnection[Any], types: set[str]) -> Any:
        """Pipeline mode for a poll whose events all go to pipelined routes (``routes.on``) and to no
        projection (an applier may read what it wrote); otherwise each statement waits for its answer."""
        if self.projection is None and self.routes.pipelined(types):
            return conn.pipeline()
        return contextlib.nullcontext()

    def _span(self, record: KafkaRecord, envelope: Envelope) -> Any:
        attrs = {"messaging.system": "kafka", "messaging.destination.name": record.topic,
                 "npcworld.event_type": envelope.type, "npcworld.event_id": str(envelope.event_id),
                 "npcworld.world_id": envelope.world_id, "npcworld.npc_id": envelope.npc_id or ""}
        return tracer().start_as_current_span(
            f"{self.name} {envelope.type}", context=context_from_headers(record.headers),
            kind=SpanKind.CONSUMER, attributes=attrs,
        )

    async def _process_one(
        self, conn: AsyncConnection[Any], record: KafkaRecord, dead: DeadLetterer, gathered: Gathered
    ) -> None:
        try:
            envelope = decode_envelope(record.value or b"")
        except PermanentError as exc:
            async with conn.transaction():
                await dead.send(conn, record, str(exc), None)
            return
        if envelope.type not in self.routes and envelope.type not in self.appliers:
            return
        with self._span(record, envelope):
            await self._handle(conn, record, envelope, dead, gathered.get(envelope.event_id))

    async def _apply(self, conn: AsyncConnection[Any], envelope: Envelope, gathered: object = None) -> None:
        """Projection first, then the reaction (with what was gathered for it), then the reaction's own events
        are folded and claimed (so a read model is a fold of events only); copies made by a world fork only
        update projections."""
        applier = self.appliers.get(envelope.type)
        if applier is not None:
            await applier(envelope, conn)
        route = self.routes.get(envelope.type)
        if route is not None and envelope.forked_from is None:
            uow = UnitOfWork(conn, self.store, cause=envelope)
            with handling(envelope.event_id, envelope.correlation_id):
                await route(envelope, uow, self.deps, gathered)
            if self.projection is not None:
                await self.projection.apply_appended(conn, uow.appended, reactions=self.routes)

    async def _handle(
        self, conn: AsyncConnection[Any], record: KafkaRecord, envelope: Envelope, dead: DeadLetterer,
        gathered: object,
    ) -> None:
        labels = {"consumer": self.name, "event_type": envelope.type}
        for attempt in range(1, self.policy.handler_attempts + 1):
            started = time.perf_counter()
            try:
                async with conn.transaction():
                    cur = await conn.execute(
                        "INSERT INTO processed_events (consumer, event_id) VALUES (%s, %s)"
                        " ON CONFLICT DO NOTHING",
                        (self.name, envelope.event_id),
                    )
                    if cur.rowcount == 0 or await claims.covered(conn, self.name, [envelope.event_id]):
                        instruments().events_skipped.add(1, labels)
                        return
                    with handling_lane(lane_of(record)):
                        await self._apply(conn, envelope, gathered)
                instruments().events_handled.add(1, labels)
                instruments().handler_duration.record(time.perf_counter() - started, labels)
                return
            except TRANSIENT_ERRORS:
                raise
            except PermanentError as exc:
                async with conn.transaction():
                    await dead.send(conn, record, f"{type(exc).__name__}: {exc}", envelope)
                return
            except Exception as exc:
                logger.exception("%s: handler for %s event_id=%s failed (attempt %d)",
                                 self.name, envelope.type, envelope.event_id, attempt)
                if attempt == self.policy.handler_attempts:
                    reason = f"handler failed {attempt} times: {type(exc).__name__}: {exc}"
                    async with conn.transaction():
                        await dead.send(conn, record, reason, envelope)
                    return
                instruments().retries.add(1, {"consumer": self.name, "kind": "handler"})
                await self.policy.sleep(attempt)

    def _report_lag(self, consumer: AIOKafkaConsumer) -> None:
        lag = instruments().lag
        for tp in consumer.assignment():
            high, position = consumer.highwater(tp), self._positions.get(tp)
            if high is not None and position is not None:
                lag[(self.name, tp.topic, tp.partition)] = max(0, high - position)


@contextlib.asynccontextmanager
async def _transaction_of(consumer: str) -> AsyncIterator[None]:
    """Marks the stretch in which ``consumer`` holds a connection with a transaction open (the guard of
    ``npcworld.slow_calls``)."""
    with in_transaction(consumer):
        yield


async def _end_aside(name: str, task: asyncio.Task[None]) -> None:
    """Let the batch beside end as the loop stops; one that fails is left uncommitted, to be redelivered."""
    try:
        await task
    except asyncio.CancelledError:
        task.cancel()
        raise
    except Exception as exc:  # _Abandoned, or a dependency lost: processed_events skips what it did
        logger.warning("%s: stopping with the ingest batch beside uncommitted (%r); it will be redelivered",
                       name, exc)


@dataclass(frozen=True)
class _Aside:
    task: asyncio.Task[None]
    records: list[KafkaRecord]
    started: float
    lane: int  # its lane's rank


class _ClaimedMeanwhile(Exception):
    """Another instance claimed an event of the batch, and a fold folded its claim into the watermark, while
    this one handled it: the batch is redone on the careful path, which skips it."""


class _Abandoned(Exception):
    """A batch given up because the loop is stopping; nothing of it was committed."""
