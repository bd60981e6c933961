"""What the town-load bench watches besides the clients: CPU seconds per process of the running
``npcworld run`` (from /proc) and the backlog the step barrier waits on (events owed per consumer)."""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg

from bench._capacity import GENERATOR
from bench._stack import children, cpu_seconds
from launcher.embedded.postgres import postgres_pid
from npcworld.messaging.heartbeat import LIVE_SECONDS, owed_sql

_BACKLOG = f"WITH {owed_sql()} SELECT consumer, count(*) FROM owed GROUP BY consumer"


def _role(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except (FileNotFoundError, ProcessLookupError):
        return "gone"
    for arg in argv:
        if arg.startswith("services.") and arg.endswith(".consumer"):
            return arg.split(".")[1]
        if arg.startswith("services.") and arg.endswith(".worker"):
            return arg.split(".")[1] + "-worker"
    if "tansu" in argv[0]:
        return "tansu"
    if "uvicorn" in argv:
        return "gateway"
    return "relay" if "relay" in argv else "other"


def _tree(pid: int) -> list[int]:
    found: list[int] = []
    todo = [pid]
    while todo and len(found) < 10_000:  # bounded: a process tree is never this big
        found.append(pid := todo.pop())
        todo.extend(children(pid))
    return found


class ProcessCpu:
    """Snapshots of CPU seconds used so far, by role (the broker is a child of the supervisor)."""

    def __init__(self, home: Path, supervisor: int) -> None:
        self.home, self.supervisor = home, supervisor

    def snapshot(self) -> dict[str, float]:
        used: dict[str, float] = {"supervisor": cpu_seconds([self.supervisor])}
        for child in children(self.supervisor):
            role = _role(child)
            used[role] = used.get(role, 0.0) + cpu_seconds(_tree(child))
        if "tansu" not in used:  # a broker restarted by the stack may not be the supervisor's child
            try:
                used["tansu"] = cpu_seconds([int((self.home / "tansu.pid").read_text())])
            except (FileNotFoundError, ValueError):
                used["tansu"] = 0.0
        master = postgres_pid(self.home / "pgdata")
        used["postgres"] = cpu_seconds(_tree(master)) if master else 0.0
        used[GENERATOR] = cpu_seconds([os.getpid()])
        return used

    @staticmethod
    def diff(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
        """CPU seconds per role between two snapshots, largest first (a restarted child counts from 0)."""
        spent = {k: round(max(0.0, v - before.get(k, 0.0)), 1) for k, v in after.items()}
        return dict(sorted(spent.items(), key=lambda kv: -kv[1]))


class Backlog:
    """Samples, once a second, the events each live consumer still owes and the outbox's length: what the
    stepped clock's barrier waits for before the next step."""

    def __init__(self, conn: psycopg.AsyncConnection[Any], since: int) -> None:
        self.conn, self.since = conn, since

    async def sample(self) -> tuple[dict[str, int], int]:
        params = {"since": self.since, "until": 2**62, "alive": LIVE_SECONDS}
        owed = {str(c): int(n) for c, n in await (await self.conn.execute(_BACKLOG, params)).fetchall()}
        row = await (await self.conn.execute("SELECT count(*) FROM outbox")).fetchone()
        return owed, int(row[0]) if row else 0

    async def run_for(self, seconds: float, every: float = 1.0) -> dict[str, Any]:
        """Mean events owed per consumer, mean outbox length, and the share of samples with nothing owed."""
        owed_sum: Counter[str] = Counter()
        outbox_sum = idle = n = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            owed, outbox = await self.sample()
            owed_sum.update(owed)
            outbox_sum += outbox
            idle += not owed and outbox == 0
            n += 1
            await asyncio.sleep(min(every, max(0.0, end - time.monotonic())))
        n = max(n, 1)
        return {
            "samples": n,
            "idle_share": round(idle / n, 2),
            "mean_outbox": round(outbox_sum / n, 1),
            "mean_owed": {c: round(v / n, 1) for c, v in owed_sum.most_common()},
        }
