"""Reads of the event store by stream go through the stream's digest: the (stream, version) index is keyed by
``stream_key(stream_id)`` (migration 0120), so a query comparing ``stream_id`` alone reads every event."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A comparison in SQL (spaces around "=", unlike a Python keyword argument), not a CASE's test.
_BY_STREAM = re.compile(r"(?<!WHEN )\b(?:\w+\.)?stream_id\s+(?:=\s+(?:%s|%\(\w+\)s|ANY|\w+\.stream_id)|IN\b)")
_NEAR = 200  # the digest's comparison comes just before the name's


def _unkeyed(text: str) -> list[str]:
    return [text[max(0, m.start() - 60):m.end()] for m in _BY_STREAM.finditer(text)
            if "stream_key(" not in text[max(0, m.start() - _NEAR):m.start()]]


def test_every_read_by_stream_compares_the_digest_the_index_is_keyed_by() -> None:
    found = {str(path.relative_to(ROOT)): hits
             for folder in ("libs", "services", "launcher", "bench")
             for path in sorted((ROOT / folder).rglob("*.py"))
             if (hits := _unkeyed(path.read_text()))}
    assert found == {}


def test_the_check_finds_a_read_by_name_alone() -> None:
    assert _unkeyed('cur.execute("SELECT max(version) FROM events WHERE stream_id = %s", (s,))')
    assert not _unkeyed('cur.execute(f"SELECT max(version) FROM events WHERE {STREAM_IS}", (s, s))')
