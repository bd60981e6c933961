"""Reads of the event store by stream or by world go through the digest its index is keyed by: the (stream,
version) index by ``stream_key(tenant_id, stream_id)``, the world's indexes by ``world_key(tenant_id,
world_id)`` (migration 0124). A query comparing the names alone reads every event of the table."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A comparison in SQL (spaces around "=", unlike a Python keyword argument), not a CASE's test.
_BY_STREAM = re.compile(r"(?<!WHEN )\b(?:\w+\.)?stream_id\s+(?:=\s+(?:%s|%\(\w+\)s|ANY|\w+\.stream_id)|IN\b)")
_BY_WORLD = re.compile(r"\b(?:\w+\.)?tenant_id\s+=\s+\S+\s+AND\s+(?:\w+\.)?world_id\s+=\s+")
_TABLE = re.compile(r"\b(?:FROM|JOIN)\s+(\w+)")
_NEAR = 400  # how far back the query names its table


def _unkeyed(text: str) -> list[str]:
    """Comparisons of stream names, and of tenant and world on the events table, outside the digest's
    functions (``in_stream``, ``in_world``)."""
    streams = [text[max(0, m.start() - 60):m.end()] for m in _BY_STREAM.finditer(text)]
    worlds = []
    for m in _BY_WORLD.finditer(text):
        tables = _TABLE.findall(text[max(0, m.start() - _NEAR):m.start()])
        if tables and tables[-1] == "events":
            worlds.append(text[max(0, m.start() - 60):m.end()])
    return streams + worlds


def test_every_read_by_stream_or_world_compares_the_digest_the_index_is_keyed_by() -> None:
    found = {str(path.relative_to(ROOT)): hits
             for folder in ("libs", "services", "launcher", "bench")
             for path in sorted((ROOT / folder).rglob("*.py"))
             if (hits := _unkeyed(path.read_text()))}
    assert found == {}


def test_the_check_finds_a_read_by_name_alone() -> None:
    assert _unkeyed('cur.execute("SELECT max(version) FROM events WHERE stream_id = %s", (s,))')
    assert not _unkeyed('cur.execute(f"SELECT max(version) FROM events WHERE {STREAM_IS}", (t, s))')
    assert _unkeyed('"SELECT max(seq) FROM events e WHERE e.tenant_id = %(t)s AND e.world_id = %(w)s"')
    assert not _unkeyed('"SELECT max(seq) FROM events WHERE in_world(tenant_id, world_id, %s, %s)"')
    assert not _unkeyed('"SELECT step FROM ws_clocks WHERE tenant_id = %s AND world_id = %s"')
