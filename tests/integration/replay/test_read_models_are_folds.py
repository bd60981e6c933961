"""Every read model is a fold of events: after a real town has stepped, a rebuild equals the live model row
for row, and ``npcworld replay`` on the running town leaves nothing owed and runs no reaction twice. And the
handlers are two-phase: while the town stepped, no service made a model call or a retrieval inside a
consumer transaction (``npcworld.slow_calls`` logs each one)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from launcher.supervisor import ProcessGroup, process_commands
from npcworld.db import open_pool
from npcworld.projection import differences, rebuild
from tests.infra import BrokerForTests
from tests.integration.replay.town import Town, projections, service_env, wait_for_step

pytestmark = pytest.mark.integration

STEPS = 6  # the first steps plan the days and record the first memories: every kind of event is there


@pytest.fixture(scope="module")
async def town(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Town]:
    root = tmp_path_factory.mktemp("town")
    broker = BrokerForTests(root)
    env = service_env(database_url, broker.bootstrap)
    group = ProcessGroup(process_commands(None), env, root / "logs")
    group.start()
    pool = await open_pool(database_url, min_size=1, max_size=4)
    try:
        town = Town(pool, group, env)
        await town.create()
        yield town
    finally:
        await pool.close()
        group.stop()
        broker.stop()


def _diff(live: dict[str, list[str]], rebuilt: dict[str, list[str]]) -> str:
    lines = []
    for table in live:
        lines += [f"{table} only live: {r}" for r in sorted(set(live[table]) - set(rebuilt[table]))[:3]]
        lines += [f"{table} only rebuilt: {r}" for r in sorted(set(rebuilt[table]) - set(live[table]))[:3]]
    return "\n".join(lines)


async def test_every_read_model_rebuilds_row_for_row_after_the_town_has_stepped(town: Town) -> None:
    await wait_for_step(town, await town.run(STEPS))
    await town.settle()
    found = projections()
    assert {"world_state", "perception", "memory", "gateway"} <= set(found)
    for service, projection in found.items():
        live = await town.snapshot(projection.tables)
        assert any(live.values()), f"{service} holds nothing after {STEPS} steps"
        assert await rebuild(town.pool, projection) > 0
        rebuilt = await town.snapshot(projection.tables)
        assert rebuilt == live, f"rebuilt {service} differs from the live one:\n{_diff(live, rebuilt)}"
    assert await town.owed() == []


async def test_replay_while_the_town_steps_leaves_nothing_owed_and_runs_no_reaction_twice(
    town: Town, tmp_path: Path
) -> None:
    last = await town.run(40)
    await wait_for_step(town, last - 35)
    before = await town.claims()
    for service in projections():
        replayed = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "launcher.cli", "replay", "--service", service],
            env=town.env, capture_output=True, text=True, timeout=120,
        )
        assert replayed.returncode == 0, replayed.stderr[-2000:]
    await wait_for_step(town, last)  # the clock goes on stepping to the end of its run
    await town.settle()
    assert await town.owed() == []
    assert before <= await town.claims()  # no claim was erased, so no event is processed again
    assert await town.doubled_reactions() == []
    for service, projection in projections().items():
        assert await differences(town.pool, projection) == [], f"{service} after a replay on the running town"


async def test_no_service_made_a_model_call_or_a_retrieval_inside_a_consumer_transaction(town: Town) -> None:
    await wait_for_step(town, await town.run(STEPS))
    await town.settle()
    async with town.pool.connection() as conn:
        calls = await (await conn.execute("SELECT count(*) FROM llm_calls WHERE world_id = %s",
                                          (town.world_id,))).fetchone()
    assert calls is not None and calls[0] > 0  # the town did think: the check below has something to see
    logs = {path.name: path.read_text(errors="replace") for path in town.group.logs.glob("*.log")}
    assert logs, "the services' logs are where the guard reports"
    caught = [line for text in logs.values() for line in text.splitlines() if "made inside consumer" in line]
    assert caught == []
