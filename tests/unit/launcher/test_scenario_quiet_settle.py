"""Settling a step on a running backend seen only through its API: wait for what the step's events cause,
then for a quiet event log (the API answered by an in-memory transport)."""

from __future__ import annotations

import json

import httpx
import pytest

from launcher.scenarios.driver import StepError
from launcher.scenarios.quiet import QuietSettler


class EventLog:
    """``GET /v1/worlds/w/events`` over a list that grows by one event on each of the first reads."""

    def __init__(self, arriving: list[dict[str, object]]) -> None:
        self.stored: list[dict[str, object]] = []
        self.arriving = arriving
        self.reads = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.reads += 1
        if self.arriving:
            self.stored.append({"seq": len(self.stored) + 1, "stream_id": "s", "event": self.arriving.pop(0)})
        return httpx.Response(200, content=json.dumps({"items": self.stored, "next_cursor": None}))


async def test_a_step_settles_after_what_it_caused_and_a_quiet_log() -> None:
    log = EventLog([{"event_id": "e1", "causation_id": None}, {"event_id": "e2", "causation_id": None},
                    {"event_id": "m1", "causation_id": "e2"}])
    async with httpx.AsyncClient(transport=httpx.MockTransport(log), base_url="http://backend") as client:
        settler = QuietSettler(client, quiet_seconds=0.3)
        await settler.settle("w", caused_by=["e2"])
    assert not log.arriving  # it waited for m1, caused by e2
    assert log.reads >= 4  # and kept reading through the quiet period


async def test_an_event_that_causes_nothing_is_a_step_error_naming_it() -> None:
    log = EventLog([{"event_id": "e1", "causation_id": None}])
    async with httpx.AsyncClient(transport=httpx.MockTransport(log), base_url="http://backend") as client:
        settler = QuietSettler(client, quiet_seconds=0.1, cause_timeout=0.5)
        with pytest.raises(StepError, match=r"nothing in world w was caused by e1 within 0\.5 s"):
            await settler.settle("w", caused_by=["e1"])
