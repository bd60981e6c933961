"""The TypeScript SDK as the tests use it: commands run as subprocesses (the event loop keeps serving the
services meanwhile), and the SDK installed and built once, whichever test needs it first."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from pathlib import Path

import pytest

__all__ = ["SDK", "install_typescript_sdk", "run"]

SDK = Path(__file__).resolve().parents[3] / "sdk" / "typescript"


async def run(*command: str, cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str]:
    """A command's exit status and output; run as a subprocess so this loop keeps serving the services."""
    proc = await asyncio.create_subprocess_exec(
        *command, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,  # npm's children (node, tsc) are stopped with it
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, out.decode(errors="replace")


def _built() -> bool:
    """dist/ is there and no source changed since tsc last built it (it rewrites its build info then)."""
    stamp = SDK / "build" / "tsbuildinfo" / "sdk.json"
    if not (SDK / "dist" / "index.js").exists() or not stamp.exists():
        return False
    sources = [*(SDK / "src").glob("*.ts"), SDK / "tsconfig.json"]
    return stamp.stat().st_mtime >= max(s.stat().st_mtime for s in sources)


async def install_typescript_sdk(env: dict[str, str]) -> str:
    """``npm ci`` when node_modules is missing or older than the lock file (it builds ``dist/`` too), else
    a full build when ``dist/`` is missing or older than the sources; returns npm's path."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.fail("the TypeScript SDK's tests need node (18 or later) and npm on PATH")
    installed = SDK / "node_modules" / ".package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < (SDK / "package-lock.json").stat().st_mtime:
        status, out = await run(npm, "ci", "--no-audit", "--no-fund", cwd=SDK, env=env, timeout=120)
        assert status == 0, f"npm ci failed:\n{out[-4000:]}"
    if not _built():
        # --force: tsc -b trusts its build info, and would leave a deleted dist/ unbuilt.
        status, out = await run(npm, "run", "build", "--", "--force", cwd=SDK, env=env, timeout=120)
        assert status == 0, f"the SDK's build failed:\n{out[-4000:]}"
    return npm
