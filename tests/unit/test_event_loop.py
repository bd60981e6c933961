"""Every long-running process runs on uvloop (installed by default), or on asyncio's own loop when an
operator sets NPCWORLD_EVENT_LOOP=asyncio; the gateway's uvicorn is told the same."""

from __future__ import annotations

import asyncio

import pytest

from launcher.supervisor import process_commands
from npcworld import aio


async def _loop_module() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


def test_processes_run_on_uvloop_by_default_and_on_asyncio_when_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NPCWORLD_EVENT_LOOP", raising=False)
    assert aio.loop_name() == "uvloop"
    assert aio.run(_loop_module()).startswith("uvloop")
    monkeypatch.setenv("NPCWORLD_EVENT_LOOP", "asyncio")
    assert aio.loop_name() == "asyncio"
    assert aio.run(_loop_module()).startswith("asyncio")


def test_the_gateways_uvicorn_runs_on_the_same_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NPCWORLD_EVENT_LOOP", raising=False)
    gateway = process_commands(8000)["gateway"]
    assert gateway[gateway.index("--loop") + 1] == "uvloop"
    monkeypatch.setenv("NPCWORLD_EVENT_LOOP", "asyncio")
    gateway = process_commands(8000)["gateway"]
    assert gateway[gateway.index("--loop") + 1] == "asyncio"
