"""Writes the sync client modules from the async ones (``_async_*.py`` → ``_sync_*.py``) by plain rewriting.

Run from the repository root: ``.venv/bin/python sdk/python/tools/unasync.py`` (``--check`` fails on drift).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "npcworld_sdk"
SOURCES = ("_async_base.py", "_async_admin.py", "_async_designer.py", "_async_client.py")

# Order matters: longer names first.
REWRITES = [
    ("AsyncBaseTransport", "BaseTransport"),
    ("AsyncEventStream", "EventStream"),
    ("AsyncIterator", "Iterator"),
    ("AsyncClient", "Client"),
    ("AsyncAdmin", "Admin"),
    ("AsyncDesigner", "Designer"),
    ("AsyncBase", "SyncBase"),
    ("_async_", "_sync_"),
    ("async def ", "def "),
    ("async with ", "with "),
    ("async for ", "for "),
    ("await ", ""),
    ("__aenter__", "__enter__"),
    ("__aexit__", "__exit__"),
    ("__aiter__", "__iter__"),
    ("aclose()", "close()"),
    ("def aclose(", "def close("),
    ("aiter_lines()", "iter_lines()"),
    ("aread()", "read()"),
    ("asyncio.sleep(", "time.sleep("),
    ("Awaitable[_request.Page[T]]", "_request.Page[T]"),
    (", Awaitable,", ","),
    ("async", "sync"),
    ("Async", "Sync"),
]


def unasync(text: str, target: Path) -> str:
    if "import time\n" in text:
        text = text.replace("import asyncio\n", "")
    else:
        text = text.replace("import asyncio\n", "import time\n")
    for old, new in REWRITES:
        text = text.replace(old, new)
    return tidy(re.sub(r"\n{4,}", "\n\n\n", text), target)


def tidy(text: str, target: Path) -> str:
    """Import order and ``yield from`` as ruff (the project's linter) wants them, then its formatting."""
    config = ["--config", str(PACKAGE.parents[1] / "pyproject.toml"), "--stdin-filename", str(target)]
    ruff = [sys.executable, "-m", "ruff"]
    fixed = subprocess.run(
        [
            *ruff,
            "check",
            "--fix-only",
            "--unsafe-fixes",
            "--quiet",
            "--select",
            "I,RUF022,UP028",
            *config,
            "-",
        ],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return subprocess.run(
        [*ruff, "format", "--quiet", *config, "-"], input=fixed, capture_output=True, text=True, check=True
    ).stdout


def outputs() -> dict[Path, str]:
    targets = {PACKAGE / name: PACKAGE / name.replace("_async_", "_sync_") for name in SOURCES}
    return {target: unasync(source.read_text(), target) for source, target in targets.items()}


def main() -> int:
    drifted = [p for p, text in outputs().items() if not p.exists() or p.read_text() != text]
    if "--check" in sys.argv[1:]:
        for p in drifted:
            print(f"{p} is out of date: run {Path(__file__).name}", file=sys.stderr)
        return 1 if drifted else 0
    for p, text in outputs().items():
        p.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
