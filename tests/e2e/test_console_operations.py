"""The console's operator tools in a real headless Chromium over the stepped town of ``test_console``: a fork
beside its source world with where they first differ, each process's model-provider breaker, and re-running
a recorded decision as a dry run."""

from __future__ import annotations

import asyncio
import json
import re
import uuid

import httpx
import psycopg
import pytest
from playwright.async_api import Browser

from npcworld.db import open_pool
from npcworld.llm import CircuitBreaker
from npcworld.messaging.heartbeat import Heartbeat, owed_sql
from tests.e2e.test_console import (
    Console,
    _npc_with_a_reasoned_decision,
    browser,
    console,
    load_start,
    signed_in,
)
from tests.integration.replay.town import Town, wait_for_step
from tests.polling import eventually

pytestmark = pytest.mark.integration
__all__ = ["browser", "console"]  # the module-scoped fixtures, shared with test_console's town


def _fork(console: Console) -> str:
    """A fork of the town at its start, whose own first three memories are the source's first three after
    that moment (with fresh ids and its own places) and whose fourth differs."""
    fork = f"fork-{uuid.uuid4().hex[:6]}"
    response = httpx.post(f"{console.url}/v1/worlds/replay-town/fork", timeout=30,
                          headers={"Authorization": f"Bearer {console.admin}"},
                          json={"at": load_start().isoformat(), "new_world_id": fork})
    assert response.status_code == 201, response.text
    source = console.sql("SELECT type, npc_id, world_time, payload::text FROM events WHERE tenant_id = %s"
                         " AND world_id = 'replay-town' AND type = 'MemoryRecorded' AND world_time > %s"
                         " ORDER BY world_time, seq LIMIT 4", console.town.tenant_id, load_start())
    assert len(source) == 4, "the town recorded too few memories after its start"
    own = [(t, n, at, p.replace("replay-town", fork)) for t, n, at, p in source[:3]]
    t, n, at, p = source[3]
    own.append((t, n, at, p.replace('"description": "', '"description": "in the fork, ')))
    for i, (t, n, at, p) in enumerate(own):
        # Straight into the log (no outbox): the fork's own events, with nothing reacting to them.
        console.sql(
            "INSERT INTO events (event_id, stream_id, version, type, schema_version, tenant_id, world_id,"
            " npc_id, world_time, recorded_at, correlation_id, payload)"
            " VALUES (%s, %s, 1, %s, 1, %s, %s, %s, %s, now(), %s, %s::jsonb)",
            uuid.uuid4(), f"{fork}-own-{i}", t, console.town.tenant_id, fork, n, at,
            uuid.uuid4(), re.sub(r'"memory_id": "[^"]+"', f'"memory_id": "{uuid.uuid4()}"', p))
    return fork


# First in the module: the tests after it write events straight into the log, which no consumer ever gets,
# and a stepped clock would wait for them.
async def test_a_save_of_the_town_is_taken_in_by_every_service_and_plays_on(console: Console) -> None:
    town = console.town
    [(now,)] = console.sql("SELECT max(world_time) FROM events WHERE tenant_id = %s AND world_id = %s",
                           town.tenant_id, town.world_id)
    save = f"save-{uuid.uuid4().hex[:6]}"
    response = httpx.post(f"{console.url}/v1/worlds/{town.world_id}/fork", timeout=30,
                          headers={"Authorization": f"Bearer {console.admin}"},
                          json={"at": now.isoformat(), "new_world_id": save})
    assert response.status_code == 201, response.text
    owed = (f"WITH {owed_sql()} SELECT count(*) FROM owed JOIN events e USING (event_id)"
            " WHERE e.world_id = %(w)s")

    def owed_in_save() -> int:
        with psycopg.connect(console.database_url) as conn:
            row = conn.execute(owed, {"since": 0, "until": 2**62, "alive": 3600, "w": save}).fetchone()
        return int(row[0]) if row else -1

    # Every service has taken in what the save inherits (its WorldForked is owed until then).
    assert await eventually(lambda: asyncio.to_thread(owed_in_save), lambda n: n == 0, timeout=120) == 0
    # Each NPC's memories are what the save's history records (the source's up to the save).
    memories = ("SELECT n.npc_id, count(*) FROM memories m JOIN memory_npcs n USING (npc_key)"
                " WHERE n.tenant_id = %s AND n.world_id = %s GROUP BY 1 ORDER BY 1")
    recorded = ("SELECT npc_id, count(*) FROM world_events(%s, %s) WHERE type = 'MemoryRecorded'"
                " GROUP BY 1 ORDER BY 1")
    assert console.sql(memories, town.tenant_id, save) == console.sql(recorded, town.tenant_id, save)
    known = "SELECT npc_id FROM planning_npcs WHERE tenant_id = %s AND world_id = %s ORDER BY 1"
    assert console.sql(known, town.tenant_id, save) == console.sql(known, town.tenant_id, town.world_id)
    source = console.sql("SELECT count(*) FROM events WHERE world_id = %s", town.world_id)
    slot = Town(town.pool, town.group, town.env, town.tenant_id, save)
    await wait_for_step(slot, await slot.run(2))
    acted = await eventually(
        lambda: asyncio.to_thread(console.sql, "SELECT count(*) FROM events WHERE tenant_id = %s"
                                  " AND world_id = %s AND type = 'ActionDecided'", town.tenant_id, save),
        lambda rows: rows[0][0] > 0, timeout=60)
    assert acted[0][0] > 0  # its NPCs plan and act in the save
    assert console.sql("SELECT count(*) FROM events WHERE world_id = %s", town.world_id) == source


async def test_a_fork_is_compared_with_its_source_world_event_by_event(
    browser: Browser, console: Console
) -> None:
    fork = _fork(console)
    page = await signed_in(browser, console, console.reader)
    await page.goto(f"{console.url}/console/worlds/{fork}")
    assert "A fork of replay-town" in await page.inner_text("#fork-of")
    await page.click("#compare-fork")
    await page.wait_for_selector("#fork-diff")
    assert await page.locator("#fork-diff td.source").count() > 0  # the source went on after the fork point
    await page.fill("#fork-filters input[name=type]", "MemoryRecorded")
    await page.click("#fork-filters button")
    await page.wait_for_selector("#divergence")
    assert "first differ at event 4" in await page.inner_text("#divergence")
    rows = page.locator("#fork-diff tr[data-position]")
    assert [await rows.nth(i).get_attribute("class") for i in range(3)] == ["same"] * 3
    first = page.locator("#fork-diff tr.first-difference")
    assert await first.get_attribute("data-position") == "3"
    assert "in the fork," in await first.locator("td.fork").inner_text()
    assert "in the fork," not in await first.locator("td.source").inner_text()

    other = await signed_in(browser, console, console.other)
    response = await other.goto(f"{console.url}/console/worlds/{fork}/fork-diff")
    assert response is not None and response.status == 404


async def test_each_process_shows_its_model_provider_breaker(browser: Browser, console: Console) -> None:
    pool = await open_pool(console.database_url, min_size=1, max_size=2)
    breaker = CircuitBreaker("openai", failure_threshold=2)
    beats = [Heartbeat(pool, "planning-live", ()), Heartbeat(pool, "dialogue-gone", ())]
    try:
        breaker.record_failure("HTTP 503: upstream overloaded")
        breaker.record_failure("HTTP 503: upstream overloaded")
        for beat in beats:
            await beat.beat()
        console.sql("UPDATE consumer_heartbeats SET seen_at = now() - interval '5 minutes'"
                    " WHERE consumer = 'dialogue-gone'")
        page = await signed_in(browser, console, console.reader)
        await page.goto(f"{console.url}/console/ops")
        live = page.locator(f"#breakers tr[data-process='planning-live/{beats[0].instance}']")
        assert await live.locator("td.state").inner_text() == "open"
        assert "HTTP 503: upstream overloaded" in await live.inner_text()
        assert "(2 in a row)" in await live.inner_text()
        gone = page.locator(f"#breakers tr[data-process='dialogue-gone/{beats[1].instance}'] td.state")
        assert (await gone.inner_text()).startswith("unknown (stale: last reported open")

        breaker.record_success()
        await beats[0].beat()
        await page.reload()
        assert await live.locator("td.state").inner_text() == "closed"
    finally:
        for beat in beats:
            await beat.stop()
        await pool.close()


def _written(console: Console) -> tuple[int, ...]:
    """What a dry run must leave alone: the town's events, retrievals, model calls and budget use."""
    return tuple(int(console.sql(query, console.town.tenant_id)[0][0] or 0) for query in (
        "SELECT count(*) FROM events WHERE tenant_id = %s AND world_id = 'replay-town'",
        "SELECT count(*) FROM events WHERE tenant_id = %s AND type = 'MemoriesAccessed'",
        "SELECT count(*) FROM llm_calls WHERE tenant_id = %s",
        "SELECT sum(used_tokens) FROM llm_budgets WHERE tenant_id = %s",
    ))


async def test_a_decision_is_re_run_as_a_dry_run_that_writes_nothing(
    browser: Browser, console: Console
) -> None:
    _, decision = await _npc_with_a_reasoned_decision(console)
    viewer = await signed_in(browser, console, console.reader)
    await viewer.goto(f"{console.url}/console/why/{decision}")
    assert await viewer.locator("form.rerun").count() == 0  # looking needs read; re-running admin
    call_id = (await viewer.locator(".call").first.get_attribute("id") or "").removeprefix("call-")
    refused = await viewer.request.post(f"{console.url}/console/why/{decision}/calls/{call_id}/rerun",
                                        form={"csrf": "forged", "model": "npcworld-offline-1"})
    assert refused.status == 403

    page = await signed_in(browser, console, console.admin)
    await page.goto(f"{console.url}/console/why/{decision}")
    before = _written(console)
    recorded = await page.locator(".call").first.locator("pre.answer").inner_text()
    token = await page.locator("form.rerun input[name=csrf]").first.get_attribute("value") or ""
    await page.locator(".call").first.locator("button.rerun-button").click()
    await page.wait_for_selector("#rerun")
    assert await page.inner_text("#verdict") == "The same answer."  # the offline provider is deterministic
    old, new = page.locator("#rerun .side").nth(0), page.locator("#rerun .side").nth(1)
    assert "offline / npcworld-offline-1" in await new.locator(".model").inner_text()
    assert await new.locator(".tokens").inner_text() == "0 in + 0 out"
    answer = await new.locator("pre.answer").inner_text()
    assert answer == await old.locator("pre.answer").inner_text()
    assert json.loads(answer) == json.loads(recorded)
    assert await page.locator("#same-prompt").count() == 1
    assert _written(console) == before  # no event, retrieval, call record or token charge

    forged = await page.request.post(f"{console.url}/console/why/{decision}/calls/{call_id}/rerun",
                                     form={"csrf": "not-the-token", "model": "npcworld-offline-1"})
    assert forged.status == 403
    live = await page.request.post(  # this town has no live model: asking for one is refused, not faked
        f"{console.url}/console/why/{decision}/calls/{call_id}/rerun",
        form={"csrf": token, "model": "other", "other_model": "gpt-4o"})
    assert live.status == 422 and "only the offline provider" in await live.text()
