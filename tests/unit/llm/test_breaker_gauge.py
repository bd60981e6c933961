"""The npcworld.llm.breaker.open gauge: per provider, how many of the process's breakers are not closed."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from npcworld.llm import CircuitBreaker
from npcworld.llm import breaker as breaker_module
from npcworld.telemetry.instruments import Instruments


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def reader(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemoryMetricReader]:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    measures = Instruments(provider.get_meter("npcworld"))
    monkeypatch.setattr(breaker_module, "instruments", lambda: measures)
    yield reader
    provider.shutdown()


def open_breakers(reader: InMemoryMetricReader) -> dict[str, float]:
    data = reader.get_metrics_data()
    assert data is not None
    return {
        str((point.attributes or {})["provider"]): point.value  # type: ignore[union-attr]
        for rm in data.resource_metrics for sm in rm.scope_metrics for metric in sm.metrics
        if metric.name == "npcworld.llm.breaker.open" for point in metric.data.data_points
    }


def test_the_gauge_follows_the_breakers_state(reader: InMemoryMetricReader) -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("openai", failure_threshold=2, reset_after_s=10, clock=clock)
    assert open_breakers(reader) == {"openai": 0}
    breaker.record_failure()
    breaker.record_failure()
    assert open_breakers(reader) == {"openai": 1}
    clock.now += 10  # half-open: still not closed until a trial succeeds
    assert open_breakers(reader) == {"openai": 1}
    breaker.before_call()
    breaker.record_success()
    assert open_breakers(reader) == {"openai": 0}


def test_breakers_of_a_provider_add_up_and_a_dropped_one_stops_counting(reader: InMemoryMetricReader) -> None:
    first = CircuitBreaker("openai", failure_threshold=1, clock=FakeClock())
    second = CircuitBreaker("openai", failure_threshold=1, clock=FakeClock())
    other = CircuitBreaker("vllm", failure_threshold=1, clock=FakeClock())
    first.record_failure()
    second.record_failure()
    assert open_breakers(reader) == {"openai": 2, "vllm": 0}
    del second, other
    gc.collect()
    assert open_breakers(reader) == {"openai": 1}
    first.record_success()
    assert open_breakers(reader) == {"openai": 0}
