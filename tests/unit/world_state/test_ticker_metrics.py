"""The world clock's metrics: a committed tick counts one step by clock mode; run_once counts running clocks.

The ticker's database is faked (the repository, the unit of work and the pool), so this checks only what the
ticker reports, not what it writes; tests/integration/world_state covers the writes.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from npcworld.telemetry.instruments import Instruments
from services.world_state import ticker as ticker_module
from services.world_state.domain import ClockState
from services.world_state.ticker import Ticker

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)


def clock(world_id: str, *, speed: float | None, paused: bool = False, until: datetime | None = None,
          last_tick_wall: float = 0.0) -> ClockState:
    return ClockState("t1", world_id, T0, step=0, step_seconds=10.0, speed=speed, paused=paused,
                      last_tick_wall=last_tick_wall, until=until)


@dataclass
class FakeDb:
    clocks: dict[str, ClockState]
    appended: list[str] = field(default_factory=list)


class FakeConnection:
    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        yield


class FakePool:
    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[FakeConnection]:
        yield FakeConnection()


class NoTrees:
    async def get(self, *_args: Any) -> None:
        return None


class NoProjection:
    async def apply_appended(self, *_args: Any, **_kwargs: Any) -> None:
        return None


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Instruments, InMemoryMetricReader, FakeDb]]:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    measures = Instruments(provider.get_meter("npcworld"))
    db = FakeDb({})

    class FakeRepository:
        def __init__(self, _conn: Any) -> None:
            pass

        async def running_clocks(self) -> list[tuple[str, str]]:
            return [("t1", w) for w, c in sorted(db.clocks.items()) if not c.paused]

        async def clock(self, _tenant: str, world_id: str, lock: bool = False) -> ClockState | None:
            return db.clocks.get(world_id)

    class FakeUnitOfWork:
        def __init__(self, *_args: Any) -> None:
            pass

        def new_event(self, payload: Any, **_kwargs: Any) -> Any:
            return payload

        async def append(self, stream_id: str, _events: Any) -> None:
            db.appended.append(stream_id)

    monkeypatch.setattr(ticker_module, "instruments", lambda: measures)
    monkeypatch.setattr(ticker_module, "WorldRepository", FakeRepository)
    monkeypatch.setattr(ticker_module, "UnitOfWork", FakeUnitOfWork)
    yield measures, reader, db
    provider.shutdown()


def make_ticker() -> Ticker:
    return Ticker(FakePool(), NoTrees(), probe=None, projection=NoProjection())  # type: ignore[arg-type]


def points(reader: InMemoryMetricReader, name: str) -> dict[tuple[tuple[str, Any], ...], float]:
    data = reader.get_metrics_data()
    assert data is not None
    return {
        tuple(sorted((point.attributes or {}).items())): point.value  # type: ignore[union-attr]
        for rm in data.resource_metrics for sm in rm.scope_metrics for metric in sm.metrics
        if metric.name == name for point in metric.data.data_points
    }


async def test_a_committed_tick_counts_one_step_by_clock_mode(
    measured: tuple[Instruments, InMemoryMetricReader, FakeDb],
) -> None:
    _, reader, db = measured
    db.clocks = {"live": clock("live", speed=1.0), "steps": clock("steps", speed=None)}
    ticker = make_ticker()

    assert await ticker.tick(("t1", "live"), wall_now=100.0)
    assert await ticker.tick(("t1", "steps"), wall_now=100.0)
    assert await ticker.tick(("t1", "steps"), wall_now=100.0)

    assert db.appended == ["clock-live", "clock-steps", "clock-steps"]
    assert points(reader, "npcworld.world.steps") == {(("mode", "realtime"),): 1, (("mode", "stepped"),): 2}


async def test_a_tick_that_is_not_due_counts_nothing(
    measured: tuple[Instruments, InMemoryMetricReader, FakeDb],
) -> None:
    _, reader, db = measured
    db.clocks = {"live": clock("live", speed=1.0, last_tick_wall=100.0),
                 "paused": clock("paused", speed=1.0, paused=True)}
    ticker = make_ticker()

    assert not await ticker.tick(("t1", "live"), wall_now=105.0)  # due at 110
    assert not await ticker.tick(("t1", "paused"), wall_now=500.0)
    assert not await ticker.tick(("t1", "gone"), wall_now=500.0)

    assert db.appended == []
    assert points(reader, "npcworld.world.steps") == {}


async def test_run_once_counts_the_clocks_that_can_still_tick(
    measured: tuple[Instruments, InMemoryMetricReader, FakeDb],
) -> None:
    measures, reader, db = measured
    db.clocks = {
        "live": clock("live", speed=1.0, last_tick_wall=1e12),  # running, not due yet
        "ended": clock("ended", speed=1.0, until=T0),  # reached its end: runs no more
        "later": clock("later", speed=1.0, until=T0 + timedelta(hours=1), last_tick_wall=1e12),
        "paused": clock("paused", speed=1.0, paused=True),
    }
    assert points(reader, "npcworld.world.clocks_running") == {}  # no ticker has counted yet

    assert await make_ticker().run_once() == 0

    assert measures.clocks_running == 2
    assert points(reader, "npcworld.world.clocks_running") == {(): 2}
