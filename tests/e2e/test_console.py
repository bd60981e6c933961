"""The ops console in a real headless Chromium (Debian's /usr/bin/chromium through Playwright), over a stepped
town run by every service: sign in, the town's map and timeline, an NPC, the why of a decision with its
memories and model call, redriving a dead letter, and another tenant seeing none of it."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import psycopg
import pytest
from playwright.async_api import Browser, Page, async_playwright

from launcher.supervisor import ProcessGroup, process_commands
from npcworld.contracts import NpcCreated, ObservationMade, WorldCreated
from npcworld.db import open_pool
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.fork import world_stream
from services.gateway.repository import GatewayRepository, KeyRepository
from tests.infra import BrokerForTests, free_port
from tests.integration.replay.town import Town, service_env, wait_for_step

pytestmark = pytest.mark.integration

STEPS = 2  # the first steps plan the day, talk, and revise plans with retrievals and model calls
CHROMIUM = "/usr/bin/chromium"


class Console:
    """The stepped town, its gateway, keys of its tenant, and a second tenant with a world of its own."""

    def __init__(self, town: Town, url: str, database_url: str) -> None:
        self.town, self.url, self.database_url = town, url, database_url
        self.admin = self.reader = self.other = ""
        self.other_world = f"hidden-{uuid.uuid4().hex[:6]}"

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            cur = conn.execute(query, params)
            return cur.fetchall() if cur.description else []


@pytest.fixture(scope="module")
async def console(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Console]:
    root = tmp_path_factory.mktemp("console")
    broker = BrokerForTests(root)
    env = service_env(database_url, broker.bootstrap)
    port = free_port()
    group = ProcessGroup(process_commands(port), env, root / "logs")
    group.start()
    pool = await open_pool(database_url, min_size=1, max_size=4)
    try:
        town = Town(pool, group, env)
        await town.create()
        await wait_for_step(town, await town.run(STEPS))
        await town.settle()
        found = Console(town, f"http://127.0.0.1:{port}", database_url)
        async with pool.connection() as conn, conn.transaction():
            keys = KeyRepository(conn)
            _, found.admin = await keys.create_key(town.tenant_id, "ops", ("read", "write", "admin"))
            _, found.reader = await keys.create_key(town.tenant_id, "viewer", ("read",))
            other_tenant, found.other = await GatewayRepository(conn).create_tenant("rival")
            uow = UnitOfWork(conn, EventStore())
            events = [uow.new_event(p, tenant_id=other_tenant, world_id=found.other_world,
                                    world_time=load_start(), npc_id=getattr(p, "npc_id", None))
                      for p in (WorldCreated(name="Rival Secret Town", start_time=load_start()),
                                NpcCreated(npc_id="zed", name="Zed Secretkeeper"))]
            await uow.append(world_stream(found.other_world), events)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the gateway is the last process to listen
            try:
                if httpx.get(f"{found.url}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        yield found
    finally:
        await pool.close()
        group.stop(timeout=3)  # a throw-away town: nothing of it needs a graceful stop
        broker.stop()


def load_start() -> Any:
    from npcworld.templates import load_template

    return load_template("brindle-hollow").start_time


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as p:
        instance = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield instance
        await instance.close()


async def signed_in(browser: Browser, console: Console, key: str) -> Page:
    page = await (await browser.new_context()).new_page()
    await page.goto(f"{console.url}/console")
    await page.fill("#api-key", key)
    await page.click("#sign-in")
    await page.wait_for_url(re.compile(r".*/console/worlds$"))
    return page


async def test_sign_in_takes_a_key_and_refuses_a_wrong_one(browser: Browser, console: Console) -> None:
    page = await (await browser.new_context()).new_page()
    await page.goto(f"{console.url}/console/worlds")
    assert "/console/login" in page.url  # nothing without a session
    await page.fill("#api-key", "npcw_not-a-key")
    await page.click("#sign-in")
    assert "unknown or revoked" in await page.inner_text("#login-error")
    await page.fill("#api-key", console.admin)
    await page.click("#sign-in")
    await page.wait_for_url(re.compile(r".*/console/worlds$"))
    cookie = next(c for c in await page.context.cookies() if c["name"] == "npcw_console")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and console.admin not in cookie["value"]
    assert "replay-town" in await page.inner_text("#worlds")


async def test_the_town_map_and_its_timeline_replay_what_the_npcs_did(
    browser: Browser, console: Console
) -> None:
    page = await signed_in(browser, console, console.reader)
    await page.click("text=replay-town")
    await page.wait_for_selector("#map svg .npc-dot")
    assert await page.locator("#map .npc-dot").count() == 4
    doing_now = await page.locator("#npcs .doing").all_inner_texts()
    assert all(doing_now), doing_now  # every NPC has started an action by the last step
    first_clock = await page.inner_text("#clock")
    # Scrub back to the town's first moment: nobody has started anything yet, and the clock says so.
    await page.eval_on_selector("#scrubber", "s => { s.value = s.min; s.dispatchEvent(new Event('input')); }")
    assert await page.inner_text("#clock") < first_clock
    assert not any(await page.locator("#npcs .doing").all_inner_texts())
    assert not await page.is_checked("#follow")
    # Play runs the timeline forward to the end again.
    await page.select_option("#speed", "3600")
    await page.click("#play")
    await page.wait_for_function("() => document.querySelector('#play').textContent.includes('Play')",
                                 timeout=10_000)
    assert await page.locator("#npcs .doing").all_inner_texts() == doing_now


async def _npc_with_a_reasoned_decision(console: Console) -> tuple[str, str]:
    """An NPC and one of its decisions made with both a retrieval and a model call."""
    rows = console.sql(
        "SELECT d.npc_id, d.event_id::text FROM events d WHERE d.tenant_id = %s"
        " AND d.type IN ('ActionDecided', 'PlanRevised', 'ConversationRequested')"
        " AND EXISTS (SELECT 1 FROM events a WHERE a.type = 'MemoriesAccessed' AND a.npc_id = d.npc_id"
        " AND a.payload -> 'retrievals' @> jsonb_build_array(jsonb_build_object('cause', d.causation_id)))"
        " AND EXISTS (SELECT 1 FROM llm_calls c WHERE c.cause_event_id = d.causation_id"
        " AND c.npc_id = d.npc_id)"
        " ORDER BY d.seq LIMIT 1", console.town.tenant_id)
    assert rows, "the town made no decision with a retrieval and a model call"
    return rows[0][0], rows[0][1]


async def test_an_npc_and_the_why_of_its_decision(browser: Browser, console: Console) -> None:
    npc, decision = await _npc_with_a_reasoned_decision(console)
    page = await signed_in(browser, console, console.reader)
    await page.goto(f"{console.url}/console/worlds/replay-town")
    await page.click(f"#npcs tr[data-npc='{npc}'] a")
    await page.wait_for_selector("#npc-name")
    assert await page.locator("#plan .block").count() >= 5
    assert await page.locator("#memories tr.memory").count() > 0
    assert await page.locator("#current-action").inner_text()
    # A retrieval query shows each memory's score parts.
    await page.fill("#retrieve input[name=q]", "the Valentine's Day party at the cafe")
    await page.click("#retrieve button")
    await page.wait_for_selector("#retrieved td.num")
    first = await page.locator("#retrieved tr").nth(1).locator("td.num").all_inner_texts()
    assert len(first) == 4 and all(re.fullmatch(r"\d\.\d{3}", v) for v in first)

    await page.click(f"#decisions a[href='/console/why/{decision}']")
    await page.wait_for_selector("#the-event")
    chain = await page.inner_text("#chain")
    assert "WorldTicked" in chain  # the clock tick that started it
    retrievals = page.locator(".retrieval")
    assert await retrievals.count() >= 1
    assert await retrievals.first.locator("q").inner_text()
    assert await retrievals.first.locator("ol.memories li").count() >= 1
    assert "(no longer in the stream)" not in await retrievals.first.inner_text()
    call = page.locator(".call").first
    assert "offline / npcworld-offline-1" in await call.locator(".model").inner_text()
    assert "prompt version" in await call.inner_text()
    assert await call.locator(".msg pre").count() >= 1 and await call.locator(".answer").inner_text()


async def test_the_event_log_filters_and_tails_live(browser: Browser, console: Console) -> None:
    page = await signed_in(browser, console, console.reader)
    await page.goto(f"{console.url}/console/events?world=replay-town&type=ObservationMade")
    shown = await page.locator("#events tr").count()
    assert shown > 1
    assert set(await page.locator("#events td:nth-child(3)").all_inner_texts()) == {"ObservationMade"}
    await page.check("#tail")
    async with console.town.pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        seen = uow.new_event(ObservationMade(description="a heron lands on the mill wheel"),
                             tenant_id=console.town.tenant_id, world_id="replay-town",
                             world_time=load_start(), npc_id="marta")
        await uow.append("perception-replay-town-marta-console", [seen])
    await page.wait_for_selector("#events tr.live", timeout=15_000)
    assert "a heron lands on the mill wheel" in await page.inner_text("#events tr.live")


def _dead_letter(console: Console, reason: str) -> tuple[int, str]:
    event_id = console.sql("SELECT event_id::text FROM events WHERE tenant_id = %s"
                           " AND type = 'ObservationMade' ORDER BY seq DESC LIMIT 1",
                           console.town.tenant_id)[0][0]
    dead = console.sql(
        "INSERT INTO dead_letters (consumer, topic, partition, \"offset\", event_id, event_type, reason,"
        " value) VALUES ('reflection', 'npcworld.perception.v1', 0, 0, %s, 'ObservationMade', %s, '')"
        " RETURNING id",
        event_id, reason)
    return int(dead[0][0]), event_id


async def test_a_dead_letter_is_redriven_from_the_operations_page(browser: Browser, console: Console) -> None:
    dead_id, _ = _dead_letter(console, "boom: a bug in reflection")
    viewer = await signed_in(browser, console, console.reader)
    await viewer.goto(f"{console.url}/console/ops")
    assert "boom: a bug in reflection" in await viewer.inner_text("#dead-letters")
    assert await viewer.locator("button.redrive").count() == 0  # looking needs read; redriving admin
    refused = await viewer.request.post(f"{console.url}/console/ops/dead-letters/{dead_id}/redrive",
                                        form={"csrf": "forged"})
    assert refused.status == 403

    page = await signed_in(browser, console, console.admin)
    await page.goto(f"{console.url}/console/ops")
    assert "memory" in await page.inner_text("#heartbeats")
    await page.click(f"#dead-letters tr[data-dead='{dead_id}'] button.redrive")
    await page.wait_for_selector("#redriven")
    assert "boom: a bug in reflection" not in await page.inner_text("main")
    assert console.sql("SELECT id FROM dead_letters WHERE id = %s", dead_id) == []
    forged = await page.request.post(f"{console.url}/console/ops/dead-letters/{dead_id}/redrive",
                                     form={"csrf": "not-the-token"})
    assert forged.status == 403


async def test_another_tenant_sees_none_of_it(browser: Browser, console: Console) -> None:
    npc, decision = await _npc_with_a_reasoned_decision(console)
    _dead_letter(console, "a secret of the town's tenant")
    page = await signed_in(browser, console, console.other)
    listed = await page.inner_text("#worlds")
    assert "Rival Secret Town" in listed and "replay-town" not in listed
    for path in ("/worlds/replay-town", f"/worlds/replay-town/npcs/{npc}", f"/why/{decision}",
                 "/worlds/replay-town/stream?after=0"):
        response = await page.goto(f"{console.url}/console{path}")
        assert response is not None and response.status == 404, path
    await page.goto(f"{console.url}/console/ops")
    assert "a secret of the town's tenant" not in await page.inner_text("main")
    await page.goto(f"{console.url}/console/events")
    assert "replay-town" not in await page.inner_text("#events")
    assert "Rival Secret Town" in await page.inner_text("#events")

    town = await signed_in(browser, console, console.reader)
    for path in (f"/worlds/{console.other_world}", f"/events?world={console.other_world}"):
        await town.goto(f"{console.url}/console{path}")
        assert "Zed" not in await town.inner_text("main"), path
