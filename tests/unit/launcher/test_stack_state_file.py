"""stack.json is replaced in one step: a service or `npcworld status` reading it while the supervisor records
a restarted component never reads a file cut short."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from launcher.embedded.stack import _write_atomically


def test_a_reader_never_sees_stack_json_half_written(tmp_path: Path) -> None:
    path = tmp_path / "stack.json"
    _write_atomically(path, json.dumps({"database_url": "postgresql://x", "n": 0}))
    done, unreadable = threading.Event(), []

    def read() -> None:
        while not done.is_set():
            try:
                json.loads(path.read_text())
            except ValueError as exc:
                unreadable.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for n in range(2000):
            _write_atomically(path, json.dumps({"database_url": "postgresql://x", "n": n, "pad": "x" * 4000}))
    finally:
        done.set()
        reader.join()
    assert unreadable == []
    assert json.loads(path.read_text())["n"] == 1999
    assert [p.name for p in tmp_path.iterdir()] == ["stack.json"]
