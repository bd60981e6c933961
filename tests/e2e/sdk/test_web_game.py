"""The web game of examples/web-game in headless Chromium (Debian's /usr/bin/chromium through Playwright),
its game server in front of a live gateway: the town drawn, the player walking it by key and by click, an
NPC's reply streaming in chunk by chunk, and the studio key in nothing the page sends or receives."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from npcworld_sdk import AsyncClient
from playwright.async_api import Browser, Page, Request, async_playwright

from tests.e2e.sdk.conftest import TOWN, Backend
from tests.e2e.sdk.typescript import install_typescript_sdk
from tests.infra import free_port

pytestmark = pytest.mark.integration
GAME = Path(__file__).resolve().parents[3] / "examples" / "web-game"
CHROMIUM = "/usr/bin/chromium"
TILE = 14  # pixels per tile, as game.js draws them
# The script a test runs in the page before chatting: each chunk span added to the log, in order, and how many
# had been shown when the reply's text replaced them.
WATCH_CHUNKS = """() => {
  const seen = (window.streamed = { chunks: [], shownBeforeReply: null });
  new MutationObserver((records) => {
    for (const record of records) for (const node of record.addedNodes) {
      if (node.nodeType === 1 && node.classList.contains("chunk")) seen.chunks.push(node.textContent);
      else if (node.nodeType === 3 && seen.shownBeforeReply === null) {
        seen.shownBeforeReply = seen.chunks.length;
      }
    }
  }).observe(document.querySelector("#log"), { childList: true, subtree: true });
}"""


@dataclass
class Game:
    url: str
    output: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
async def game(backend: Backend) -> AsyncIterator[Game]:
    """examples/web-game/server.mjs on a free port, holding the backend's studio key."""
    port = free_port()
    env = {**os.environ, "NPCWORLD_URL": backend.url, "NPCWORLD_API_KEY": backend.key, "PORT": str(port)}
    await install_typescript_sdk(env)
    node = shutil.which("node")
    assert node is not None
    proc = await asyncio.create_subprocess_exec(
        node, str(GAME / "server.mjs"), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    assert proc.stdout is not None
    running = Game(f"http://127.0.0.1:{port}")
    first = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
    assert "the web game is on" in first, first + (await proc.stdout.read()).decode()

    async def keep_output(stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            running.output.append(line.decode())

    reader = asyncio.create_task(keep_output(proc.stdout))
    yield running
    proc.terminate()
    await proc.wait()
    await reader


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as p:
        instance = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield instance
        await instance.close()


@dataclass
class Traffic:
    """Every request the page makes, and the body of each answer as it finished (read then: the browser
    drops bodies later). A Server-Sent Events answer (the SDK closes it once the reply came) is not kept by
    the browser; what the page showed of it is in the page, which the tests read."""

    requests: list[Request] = field(default_factory=list)
    bodies: dict[str, bytes] = field(default_factory=dict)

    async def finished(self, request: Request) -> None:
        response = await request.response()
        if response is not None and "text/event-stream" not in response.headers.get("content-type", ""):
            self.bodies[f"{request.method} {request.url} #{len(self.bodies)}"] = await response.body()


async def _open(browser: Browser, game: Game) -> tuple[Page, Traffic]:
    """The game loaded in a fresh browser context, and its traffic from the start."""
    page = await (await browser.new_context(viewport={"width": 1600, "height": 1000})).new_page()
    traffic = Traffic()
    page.on("request", lambda request: traffic.requests.append(request))
    page.on("requestfinished", traffic.finished)
    await page.goto(game.url)
    await page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    return page, traffic


async def _position(page: Page) -> tuple[int, int]:
    x, y = (await page.inner_text("#player-pos")).split(",")
    return int(x), int(y)


async def _pixel(page: Page, tile: tuple[int, int]) -> list[int]:
    script = "([x, y]) => [...document.querySelector('#map').getContext('2d').getImageData(x, y, 1, 1).data]"
    # The tile's top middle: inside the marker's disc, above its letter.
    return list(await page.evaluate(script, [tile[0] * TILE + TILE // 2, tile[1] * TILE + 1]))


async def _walk_with_keys(page: Page) -> None:
    """One step by arrow key (whichever direction is free), then back with the opposite WASD key."""
    start = await _position(page)
    for arrow, back, (dx, dy) in [("ArrowRight", "a", (1, 0)), ("ArrowDown", "w", (0, 1)),
                                  ("ArrowLeft", "d", (-1, 0)), ("ArrowUp", "s", (0, -1))]:
        await page.keyboard.press(arrow)
        if (moved := await _position(page)) != start:
            assert moved == (start[0] + dx, start[1] + dy)
            await page.keyboard.press(back)
            assert await _position(page) == start
            return
    raise AssertionError(f"the player at {start} could not move in any direction")


def _npc(game: Game, npc_id: str) -> tuple[tuple[int, int], str]:
    """Where the game server says the NPC stands: its tile, and its place as the page names it."""
    (npc,) = [p for p in httpx.get(f"{game.url}/positions").json() if p["npc_id"] == npc_id]
    _, sector, arena = npc["location"].split(":")[:3]
    return (int(npc["tile"][0]), int(npc["tile"][1])), f"{sector}, {arena}"


async def _walk_to(page: Page, tile: tuple[int, int]) -> None:
    """A click on the map's tile: the player walks there around the walls."""
    canvas = page.locator("#map")
    box, width = await canvas.bounding_box(), await canvas.evaluate("c => c.width")
    assert box is not None
    scale = box["width"] / width
    await canvas.click(position={"x": (tile[0] + 0.5) * TILE * scale, "y": (tile[1] + 0.5) * TILE * scale})
    wanted = f"{tile[0]},{tile[1]}"
    await page.wait_for_function(f"document.querySelector('#player-pos').textContent === '{wanted}'",
                                 timeout=30_000)


async def test_a_player_walks_to_an_npc_and_its_reply_streams_in_chunk_by_chunk(
    browser: Browser, game: Game, sdk: AsyncClient
) -> None:
    page, _ = await _open(browser, game)
    assert "brindle-hollow" in await page.inner_text("#status")
    town = httpx.get(f"{game.url}/town").json()
    size = await page.locator("#map").evaluate("canvas => [canvas.width, canvas.height]")
    assert size == [len(town["rows"][0]) * TILE, len(town["rows"]) * TILE]
    wall = next((x, y) for y, row in enumerate(town["rows"]) for x, ch in enumerate(row) if ch == "#")
    assert await _pixel(page, wall) == [0x5B, 0x4A, 0x3A, 255]  # walls drawn where the tile map has them
    await _walk_with_keys(page)

    marta, place = _npc(game, "marta")
    await _walk_to(page, marta)
    assert (await _pixel(page, marta))[:3] == [0xC0, 0x39, 0x2B]  # the player's marker is there
    assert "Marta Quill" in await page.inner_text('#nearby li[data-npc="marta"]')
    assert await page.inner_text("#where") == place

    await page.click('#nearby li[data-npc="marta"] button')
    await page.evaluate(WATCH_CHUNKS)
    await page.fill("#line", "What are you baking today?")
    await page.press("#line", "Enter")
    said = page.locator('#log p.npc[data-state="done"]')
    await said.wait_for(timeout=30_000)
    shown = await said.locator(".text").inner_text()
    streamed: dict[str, Any] = await page.evaluate("window.streamed")
    assert streamed["shownBeforeReply"] > 1 and len(streamed["chunks"]) == streamed["shownBeforeReply"]
    assert "".join(streamed["chunks"]).strip() == shown
    event_id = await said.get_attribute("data-event-id")
    assert event_id and (await sdk.chat_result(TOWN, "marta", event_id)).reply.strip() == shown
    assert "What are you baking today?" in await page.inner_text("#log p.player")


async def test_the_page_holds_only_a_chat_token_and_never_sees_the_studio_key(
    browser: Browser, game: Game, backend: Backend
) -> None:
    page, traffic = await _open(browser, game)
    await page.keyboard.press("t")  # the nearest NPC, if any is near the spawn point; else a walk to one
    if await page.locator("#talk").is_hidden():
        await _walk_to(page, _npc(game, "marta")[0])
        await page.keyboard.press("t")
    await page.fill("#line", "Good morning!")
    await page.press("#line", "Enter")
    await page.locator('#log p.npc[data-state="done"]').wait_for(timeout=30_000)

    sent = [await r.all_headers() for r in traffic.requests]
    tokens = {h["authorization"].removeprefix("Bearer ") for h in sent if "authorization" in h}
    assert len(tokens) == 1 and backend.key not in tokens
    (token,) = tokens
    bearer = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=backend.url, headers=bearer) as player:
        assert (await player.get(f"/v1/worlds/{TOWN}/npcs")).status_code == 403  # it can chat, nothing else
    # The game server passes on only the chat routes, whatever the page sends.
    assert await page.evaluate(f"fetch('/v1/worlds/{TOWN}/npcs').then(r => r.status)") == 404
    assert not any(backend.key in str(headers) for headers in sent)
    assert not any(backend.key in r.url for r in traffic.requests)
    assert len([r for r in traffic.requests if r.url.endswith("/stream")]) == 1  # the reply's
    assert any(what.startswith("POST ") and "/session #" in what for what in traffic.bodies)
    assert [what for what, body in traffic.bodies.items() if backend.key.encode() in body] == []
    for where in ("document.documentElement.outerHTML", "JSON.stringify(localStorage)", "document.cookie"):
        assert backend.key not in await page.evaluate(where)
