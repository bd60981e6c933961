"""The longest transactions while a town steps: samples ``pg_stat_activity`` during ``npcworld simulate``.

Run: python -m bench.long_transactions [--days 0.01] [--burners 0] [--interval 0.05] [--json FILE]
It runs ``npcworld simulate`` (every service process, the brindle-hollow town, a stepped clock) in a temporary
directory and, every ``--interval`` seconds, reads each client backend's open transaction: its age, whether it
holds a transaction id (a writer: the outbox relay waits for every writer older than a row) and its current or
last statement. ``--burners N`` starts N busy-looping processes meanwhile (a busy machine). It prints, per
statement, the longest transaction seen, the longest writer overall, the oldest unpublished outbox row and the
longest stretch in which the clock did not step. Figures are wall-clock and depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

_SAMPLE = """
SELECT pid, extract(epoch FROM now() - xact_start), backend_xid IS NOT NULL, state, left(query, 90)
FROM pg_stat_activity
WHERE backend_type = 'client backend' AND xact_start IS NOT NULL AND pid <> pg_backend_pid()
"""
_OUTBOX = """
SELECT coalesce(extract(epoch FROM now() - min(e.recorded_at)), 0)
FROM outbox o JOIN events e ON e.seq = o.seq
"""
_STEP = "SELECT coalesce(max(step), 0) FROM ws_clocks"


def _burn() -> None:
    while True:
        pass


def _database_url(home: Path, deadline: float) -> str:
    state = home / "stack" / "stack.json"
    while time.monotonic() < deadline:
        if state.exists():
            try:
                return str(json.loads(state.read_text())["database_url"])
            except (ValueError, KeyError):
                pass
        time.sleep(0.2)
    raise TimeoutError("the simulation's stack did not start")


def _watch(url: str, proc: subprocess.Popen[bytes], interval: float) -> dict[str, Any]:
    longest: dict[str, float] = {}
    writer, oldest_outbox, stall = 0.0, 0.0, 0.0
    last_step, last_change = -1, time.monotonic()
    with psycopg.connect(url, autocommit=True) as conn:
        while proc.poll() is None:
            try:
                rows = conn.execute(_SAMPLE).fetchall()
                oldest_outbox = max(oldest_outbox, float(conn.execute(_OUTBOX).fetchone()[0]))  # type: ignore[index]
                step = int(conn.execute(_STEP).fetchone()[0])  # type: ignore[index]
            except psycopg.Error:
                break  # the simulation is shutting its stack down
            for _, age, has_xid, _, query in rows:
                key = " ".join(str(query).split())
                longest[key] = max(longest.get(key, 0.0), float(age))
                if has_xid:
                    writer = max(writer, float(age))
            now = time.monotonic()
            if step != last_step:
                last_step, last_change = step, now
            elif step > 0:
                stall = max(stall, now - last_change)
            time.sleep(interval)
    top = sorted(longest.items(), key=lambda kv: -kv[1])[:8]
    return {"longest_writer_s": round(writer, 2), "oldest_unpublished_s": round(oldest_outbox, 2),
            "longest_wait_between_steps_s": round(stall, 2), "steps": last_step,
            "longest_by_statement": [{"seconds": round(s, 2), "statement": q} for q, s in top]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--days", type=float, default=0.01)
    parser.add_argument("--burners", type=int, default=0)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="npcworld-bench-xact-"))
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(args.burners)]
    for b in burners:
        b.start()
    load_before = os.getloadavg()
    began = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "launcher.cli", "simulate", "--days", str(args.days), "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        result = _watch(_database_url(out, time.monotonic() + 120), proc, args.interval)
        proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=60)
        for b in burners:
            b.terminate()
    result.update({"days": args.days, "burners": args.burners, "load_before": load_before,
                   "load_after": os.getloadavg(), "wall_s": round(time.monotonic() - began, 1),
                   "exit_code": proc.returncode})
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
