"""Routes keyed by payload class, and the loop's two-phase contract: a route's gather runs before the
transaction and hands its result to the apply step; a model call made inside a transaction is caught."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope, EventPayload, ObservationMade, PlayerSpoke, WorldTicked
from npcworld.errors import PermanentError
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.llm import OfflineLLM
from npcworld.llm.prompts import ImportanceOutput
from npcworld.messaging import ConsumerLoop, Routes, on
from npcworld.projection import Appliers, applier
from npcworld.slow_calls import current_transaction, in_transaction

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)


def _event(payload: EventPayload, npc: str = "marta") -> Envelope:
    return Envelope.new(payload, tenant_id="t", world_id="w", world_time=T0, npc_id=npc)


@dataclass
class _Seen:
    """What the handlers and gathers of a test saw, in order."""

    log: list[tuple[str, Any]] = field(default_factory=list)
    llm: OfflineLLM = field(default_factory=OfflineLLM)


async def _gather_texts(
    events: Sequence[Envelope[ObservationMade]], deps: _Seen, pool: AsyncConnectionPool
) -> Mapping[uuid.UUID, str]:
    deps.log.append(("gather", (current_transaction(), [e.payload.description for e in events])))
    await _rate(deps)
    return {e.event_id: e.payload.description.upper() for e in events}


async def _apply_text(
    event: Envelope[ObservationMade], uow: UnitOfWork, deps: _Seen, text: str | None
) -> None:
    deps.log.append(("apply", (current_transaction(), event.payload.description, text)))


async def _apply_with_a_model_call(event: Envelope[WorldTicked], uow: UnitOfWork, deps: _Seen) -> None:
    await _rate(deps)
    deps.log.append(("tick", event.payload.step))


async def _rate(deps: _Seen) -> None:
    inputs = {"npc_name": "Marta", "memories": ["the stove is burning"]}
    await deps.llm.complete("importance", inputs, ImportanceOutput, tenant_id="t", world_id="w")


ROUTES = Routes(
    on(ObservationMade, _apply_text, gather=_gather_texts),
    on(WorldTicked, _apply_with_a_model_call),
)


def test_routes_are_keyed_by_event_type_and_say_which_gather() -> None:
    assert sorted(ROUTES) == ["ObservationMade", "WorldTicked"]
    assert ROUTES.gathering() == {"ObservationMade"}
    with pytest.raises(ValueError, match="two routes for WorldTicked"):
        Routes(on(WorldTicked, _apply_with_a_model_call), on(WorldTicked, _apply_with_a_model_call))


def test_a_poll_is_pipelined_only_when_every_route_it_reaches_is_declared_pipelined() -> None:
    routes = Routes(on(WorldTicked, _apply_with_a_model_call, pipelined=True), on(PlayerSpoke, _apply_spoke))
    assert routes.pipelined({"WorldTicked"})
    assert not routes.pipelined({"WorldTicked", "PlayerSpoke"})
    assert not routes.pipelined({"ObservationMade"})  # no route of this consumer: nothing is promised
    assert not ROUTES.pipelined({"ObservationMade"})  # the default: every statement waits for its answer


async def _apply_spoke(event: Envelope[PlayerSpoke], uow: UnitOfWork, deps: _Seen) -> None:
    deps.log.append(("spoke", event.payload.text))


async def test_a_route_refuses_an_event_whose_payload_is_not_its_class() -> None:
    spoke = _event(PlayerSpoke(player_id="p1", text="hello"))
    with pytest.raises(PermanentError, match="carries a PlayerSpoke, not a WorldTicked"):
        await ROUTES["WorldTicked"](spoke, UnitOfWork(None, EventStore()), _Seen())  # type: ignore[arg-type]


async def test_an_applier_refuses_an_event_whose_payload_is_not_its_class() -> None:
    folded: list[str] = []

    async def fold(event: Envelope[ObservationMade], conn: Any) -> None:
        folded.append(event.payload.description)

    appliers = Appliers(applier(ObservationMade, fold))
    await appliers["ObservationMade"](_event(ObservationMade(description="a fire")), None)  # type: ignore[arg-type]
    with pytest.raises(PermanentError):
        await appliers["ObservationMade"](_event(WorldTicked(step=1, step_seconds=10)), None)  # type: ignore[arg-type]
    assert folded == ["a fire"]


def test_a_model_call_is_caught_inside_a_consumer_transaction_and_not_outside(
    caplog: pytest.LogCaptureFixture,
) -> None:
    deps = _Seen()
    with caplog.at_level(logging.WARNING, logger="npcworld.slow_calls"):
        asyncio.run(_rate(deps))
        assert caplog.records == []
        with in_transaction("planning"):
            asyncio.run(_rate(deps))
    assert [r.getMessage() for r in caplog.records] == [
        "llm call importance made inside consumer planning's transaction (event_id=None)"
    ]


class _Cursor:
    rowcount = 1

    async def fetchall(self) -> list[Any]:
        return []  # nothing processed yet


class _Conn:
    """A connection whose statements succeed (no event was processed before)."""

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        yield

    async def execute(self, query: str, params: Any = None) -> _Cursor:
        return _Cursor()


class _Pool:
    @contextlib.asynccontextmanager
    async def connection(self, timeout: float | None = None) -> AsyncIterator[_Conn]:
        yield _Conn()


@dataclass(frozen=True)
class _Record:
    value: bytes
    offset: int
    topic: str = "t"
    partition: int = 0
    key: bytes | None = None
    headers: tuple[tuple[str, bytes], ...] = ()


async def test_the_loop_gathers_before_the_transaction_and_hands_each_apply_step_its_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    deps = _Seen()
    pool: Any = _Pool()
    loop: ConsumerLoop[_Seen] = ConsumerLoop("c", ROUTES, deps, pool=pool, bootstrap="127.0.0.1:1")
    events = [_event(ObservationMade(description="a fire")), _event(WorldTicked(step=3, step_seconds=10)),
              _event(ObservationMade(description="smoke"))]
    records = [_Record(e.to_json(), i) for i, e in enumerate(events)]
    with caplog.at_level(logging.WARNING, logger="npcworld.slow_calls"):
        await loop._process_batch(records, None)  # type: ignore[arg-type]
    assert deps.log == [
        ("gather", (None, ["a fire", "smoke"])),  # outside any transaction, the poll's events in order
        ("apply", ("c", "a fire", "A FIRE")),
        ("tick", 3),
        ("apply", ("c", "smoke", "SMOKE")),
    ]
    # The gather's model call went unnoticed; the one the tick's handler made inside the transaction did not.
    assert [r.getMessage() for r in caplog.records] == [
        f"llm call importance made inside consumer c's transaction (event_id={events[1].event_id})"
    ]


async def test_when_gathers_read_what_the_consumer_writes_a_gather_waits_for_the_writes_before_it() -> None:
    deps = _Seen()
    pool: Any = _Pool()
    routes = Routes(on(ObservationMade, _apply_text, gather=_gather_texts),
                    on(WorldTicked, _apply_with_a_model_call), gathers_read_writes=True)
    loop: ConsumerLoop[_Seen] = ConsumerLoop("c", routes, deps, pool=pool, bootstrap="127.0.0.1:1")
    events = [_event(ObservationMade(description="a fire")), _event(ObservationMade(description="ash")),
              _event(WorldTicked(step=3, step_seconds=10)), _event(ObservationMade(description="smoke"))]
    await loop._process_batch([_Record(e.to_json(), i) for i, e in enumerate(events)], None)  # type: ignore[arg-type]
    assert deps.log == [
        ("gather", (None, ["a fire", "ash"])),  # together: nothing written here comes before them
        ("apply", ("c", "a fire", "A FIRE")),
        ("apply", ("c", "ash", "ASH")),
        ("tick", 3),
        ("gather", (None, ["smoke"])),  # after the tick was applied (and committed)
        ("apply", ("c", "smoke", "SMOKE")),
    ]
