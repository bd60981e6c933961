"""Every benchmark under bench/ still imports: a bench is run by hand, rarely, so a renamed helper it uses
would otherwise only show when someone next needs its figures."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("module", sorted(p.stem for p in BENCH.glob("*.py") if p.stem != "__init__"))
def test_bench_module_imports(module: str) -> None:
    importlib.import_module(f"bench.{module}")
