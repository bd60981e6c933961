"""Screenshots of each console view: ``python -m bench.console_screenshots [--out docs/console]``.

Without ``--url`` it runs ``npcworld run`` (the embedded stack and the 25-NPC demo town) in a temporary
home, signs in with the demo key once the town has acted for ``--wait`` seconds, and saves a PNG of the
sign-in page, the world view (now, and scrubbed back), an NPC's inspector, the why view of one of its
decisions and a dry-run re-run of its first model call, the operations page, the event log, and a fork of
the town made halfway through the window beside the town; then stops the run. With ``--url URL --key KEY
--world W`` it uses a running gateway instead. Needs Debian's chromium (``/usr/bin/chromium``).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
from playwright.sync_api import Page, sync_playwright

from launcher.demo import DEMO_WORLD
from launcher.private_ports import free_port

CHROMIUM = "/usr/bin/chromium"


def sign_in(page: Page, url: str, key: str) -> None:
    page.goto(f"{url}/console/login")
    page.fill("#api-key", key)
    page.click("#sign-in")
    page.wait_for_url(re.compile(r".*/console/worlds$"))


def shoot(url: str, key: str, world: str, npc: str | None, out: Path) -> list[Path]:
    """Sign in and save one PNG per view under ``out``; returns the files."""
    out.mkdir(parents=True, exist_ok=True)
    saved: list[Path] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})

        def save(name: str, full: bool = True) -> None:
            path = out / f"{name}.png"
            page.screenshot(path=str(path), full_page=full)
            saved.append(path)

        page.goto(f"{url}/console/login")
        save("sign-in", full=False)
        sign_in(page, url, key)
        save("worlds", full=False)
        page.goto(f"{url}/console/worlds/{world}")
        save("world")
        scrubber = page.locator("#scrubber")
        low, high = float(scrubber.get_attribute("min") or 0), float(scrubber.get_attribute("max") or 0)
        page.eval_on_selector("#scrubber", "(s, v) => { s.value = v; s.dispatchEvent(new Event('input')); }",
                              str(int(low + (high - low) * 0.3)))
        save("world-scrubbed")
        npc = npc or page.locator("#npcs tr[data-npc]").first.get_attribute("data-npc")
        page.goto(f"{url}/console/worlds/{world}/npcs/{npc}")
        save("npc")
        query = page.locator("#memories tr.memory td").nth(2).inner_text()[:60]
        page.goto(f"{url}/console/worlds/{world}/npcs/{npc}?q={query}")
        save("npc-retrieval")
        # A plan revision is made with a retrieval and a model call; any decision will do otherwise.
        revised = page.locator("#decisions li[data-type=PlanRevised] a.why")
        why = (revised if revised.count() else page.locator("#decisions a.why")).first.get_attribute("href")
        page.goto(f"{url}{why}")
        save("why")
        _rerun_and_fork(page, save, (url, key, world), int(low + (high - low) * 0.5))
        page.goto(f"{url}/console/ops")
        save("ops")
        page.goto(f"{url}/console/events?world={world}")
        save("events", full=False)
        browser.close()
    return saved


def _rerun_and_fork(page: Page, save: Callable[[str], None], where: tuple[str, str, str], at_ms: int) -> None:
    """The re-run of the first model call on the why page shown, then a fork at ``at_ms`` beside the world."""
    url, key, world = where
    if page.locator("button.rerun-button").count():  # the key has admin: re-run the first call
        page.locator("button.rerun-button").first.click()
        page.wait_for_selector("#rerun")
        save("rerun")
    _fork(url, key, world, at_ms)
    page.goto(f"{url}/console/worlds/{world}-fork/fork-diff")
    save("fork")


def _fork(url: str, key: str, world: str, at_ms: int) -> None:
    """Fork the world at ``at_ms`` (epoch milliseconds) into ``<world>-fork``, start its clock (stepped) and
    let it act for 40 s."""
    at = datetime.fromtimestamp(at_ms / 1000, UTC).isoformat()
    response = httpx.post(f"{url}/v1/worlds/{world}/fork", headers={"Authorization": f"Bearer {key}"},
                          json={"at": at, "new_world_id": f"{world}-fork"}, timeout=60)
    if response.status_code not in (201, 409):  # 409: forked by an earlier run against this gateway
        raise SystemExit(f"fork failed: {response.status_code} {response.text}")
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
        for _ in range(120):  # the fork's clock exists once world state has folded the copies
            if client.get(f"/v1/worlds/{world}-fork/clock").status_code == 200:
                break
            time.sleep(1)
        client.post(f"/v1/worlds/{world}-fork/clock", json={"paused": False, "mode": "stepped"})
    time.sleep(40)


def _demo(home: Path, wait: float) -> tuple[subprocess.Popen[str], str, str]:
    port = free_port()
    env = {**os.environ, "NPCWORLD_HOME": str(home)}
    env.pop("DATABASE_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "launcher.cli", "run", "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        print(line, end="", flush=True)
        if "demo town" in line and "running" in line:
            break
    else:
        raise SystemExit("npcworld run ended before the demo town ran")
    time.sleep(wait)
    return proc, f"http://127.0.0.1:{port}", (home / "demo-api-key").read_text().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/console"))
    parser.add_argument("--url")
    parser.add_argument("--key")
    parser.add_argument("--world", default=DEMO_WORLD)
    parser.add_argument("--npc", default="marta")
    parser.add_argument("--wait", type=float, default=60.0, help="seconds the demo town runs first")
    args = parser.parse_args()
    if args.url:
        for path in shoot(args.url, args.key, args.world, args.npc, args.out):
            print(path)
        return
    with tempfile.TemporaryDirectory(prefix="npcworld-shots-") as home:
        proc, url, key = _demo(Path(home), args.wait)
        try:
            for path in shoot(url, key, args.world, args.npc, args.out):
                print(path)
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(120)


if __name__ == "__main__":
    main()
