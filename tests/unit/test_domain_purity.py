"""Domain packages stay pure: no I/O libraries, no clocks, randomness or uuid4 inside them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("psycopg", "aiokafka", "kafka", "fastapi", "celery", "openai", "opentelemetry", "httpx",
             "random", "uuid", "time", "socket", "subprocess", "asyncio")
DOMAIN_FILES = sorted((ROOT / "services").glob("*/domain/**/*.py"))


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_there_are_domain_packages_to_check() -> None:
    assert DOMAIN_FILES


@pytest.mark.parametrize("path", DOMAIN_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_domain_modules_import_no_io_clock_or_randomness(path: Path) -> None:
    bad = _imports(path) & set(FORBIDDEN)
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


@pytest.mark.parametrize("path", DOMAIN_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_domain_modules_never_read_the_wall_clock(path: Path) -> None:
    source = path.read_text()
    assert "datetime.now(" not in source and "datetime.utcnow(" not in source
