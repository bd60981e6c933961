"""Load while the town runs: concurrent clients post perceptions and chats through the public REST API while
the demo town (brindle-hollow, 25 NPCs, stepped clock) steps, and the town's step rate is compared with and
without them.

Run: python -m bench.town_load [--clients 30] [--seconds 60] [--baseline-seconds 30] [--chat-share 0.3]
     [--think-ms 1000] [--instances memory=2,planning=2] [--json FILE]
It starts ``npcworld run`` (every process as an operator runs it: the supervisor, the embedded Postgres and
broker, the relay, every service, the Celery worker, the gateway) in a temporary home on free ports, with the
demo tenant's API key. Once the town has stepped ``--warmup-steps`` steps it measures the step rate for
``--baseline-seconds``, then runs ``--clients`` clients for ``--seconds``: each waits a think time
(exponential, mean ``--think-ms``; 0 = saturation), then posts a perception or (``--chat-share``) a chat
that waits for the NPC's reply, each with an Idempotency-Key; a few requests (``--resend-share``) are sent
again with the same key and must replay the first answer. Afterwards it waits for the chats' replies and
matches every request to the events it left. Everything listens on 127.0.0.1 and every loop is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench._capacity import capacity
from bench._stack import unwind_on_term
from bench._town_clients import LoadPlan, check_events, check_replies, drive, summarise
from bench._town_watch import Backlog, ProcessCpu
from launcher.private_ports import free_port, private_api_env

WORLD = "brindle-hollow"


class Town:
    """``npcworld run`` with the demo town in a temporary home; stopped (and removed) on exit."""

    def __init__(self, keep_logs: bool, instances: str = "") -> None:
        self.home = Path(tempfile.mkdtemp(prefix="npcworld-bench-town-"))
        self.port, self.kafka_port = free_port(), free_port()
        self.keep_logs = keep_logs
        self.instances = instances
        self.proc: subprocess.Popen[bytes] | None = None
        self.database_url = ""
        self.key = ""

    def __enter__(self) -> Town:
        # Not 8101/8102: another backend on this machine may use them.
        env = {**os.environ, "NPCWORLD_KAFKA_PORT": str(self.kafka_port), "LOG_LEVEL": "WARNING",
               **private_api_env()}
        out = (self.home / "run.log").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "launcher.cli", "--home", str(self.home), "run", "--port", str(self.port)]
            + (["--instances", self.instances] if self.instances else []),
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
        print(f"npcworld run in {self.home}, gateway on 127.0.0.1:{self.port}", file=sys.stderr)
        try:
            self._wait_started()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_started(self, timeout: float = 300) -> None:
        key_file, state_file = self.home / "demo-api-key", self.home / "stack.json"
        deadline = time.monotonic() + timeout
        while not (key_file.exists() and state_file.exists()):
            if self.proc is None or self.proc.poll() is not None:
                raise RuntimeError(f"npcworld run exited at start; see {self.home}/run.log")
            if time.monotonic() > deadline:
                raise RuntimeError("npcworld run did not create the demo tenant in time")
            time.sleep(0.3)
        time.sleep(0.2)  # the key file is written in one call; give it a moment to be complete
        self.key = key_file.read_text().strip()
        self.database_url = json.loads(state_file.read_text())["database_url"]

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # the supervisor stops its children and the stack
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.keep_logs:
            print(f"logs kept in {self.home}/logs", file=sys.stderr)
        else:
            shutil.rmtree(self.home, ignore_errors=True)


class Clock:
    """Samples the town's step and world time from its clock row every ``every`` seconds."""

    def __init__(self, conn: psycopg.AsyncConnection[Any], every: float = 0.5) -> None:
        self.conn, self.every = conn, every
        self.samples: list[tuple[float, int]] = []
        self.world_time = ""

    async def read(self) -> int:
        cur = await self.conn.execute("SELECT step, world_time FROM ws_clocks WHERE world_id = %s", (WORLD,))
        row = await cur.fetchone()
        if row is None:
            return -1
        self.world_time = row[1].isoformat()
        self.samples.append((time.monotonic(), int(row[0])))
        return int(row[0])

    async def run_for(self, seconds: float) -> dict[str, float]:
        """Sample for ``seconds``; the steps and steps/s over exactly that window."""
        first = (time.monotonic(), await self.read())
        end = first[0] + seconds
        while time.monotonic() < end:
            await asyncio.sleep(min(self.every, max(0.0, end - time.monotonic())))
            await self.read()
        last = self.samples[-1]
        steps = last[1] - first[1]
        return {"seconds": round(last[0] - first[0], 1), "steps": steps,
                "steps_per_s": round(steps / max(1e-9, last[0] - first[0]), 2)}

    async def until_step(self, step: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while await self.read() < step:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the town did not reach step {step} within {timeout:.0f} s")
            await asyncio.sleep(0.5)


async def _measure(town: Town, args: argparse.Namespace) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {town.key}"}
    limits = httpx.Limits(max_connections=args.clients + 2, max_keepalive_connections=args.clients + 2)
    url = town.database_url
    async with (
        await psycopg.AsyncConnection.connect(url, autocommit=True) as conn,
        await psycopg.AsyncConnection.connect(url, autocommit=True) as watch_conn,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{town.port}", headers=headers,
                          timeout=args.chat_timeout_s + 20, limits=limits) as http,
    ):
        clock = Clock(conn)
        await clock.until_step(args.warmup_steps, timeout=600)
        listing = (await http.get(f"/v1/worlds/{WORLD}/npcs")).raise_for_status().json()
        npcs = [n["npc_id"] for n in listing["items"]]
        cpu = ProcessCpu(town.home, town.proc.pid if town.proc else 0)
        row = await (await conn.execute("SELECT coalesce(max(seq), 0) FROM events")).fetchone()
        since = int(row[0]) if row else 0
        backlog = Backlog(watch_conn, max(0, since - 1_000))
        load_before = os.getloadavg()
        print(f"town at step {clock.samples[-1][1]}; baseline {args.baseline_seconds:.0f} s", file=sys.stderr)
        cpu_base = cpu.snapshot()
        before, owed_before = await asyncio.gather(
            clock.run_for(args.baseline_seconds), backlog.run_for(args.baseline_seconds)
        )
        cpu_mid = cpu.snapshot()
        seq_mid = await _max_seq(conn)
        plan = LoadPlan(WORLD, npcs, args.clients, args.seconds, args.chat_share, args.think_ms,
                        args.resend_share, args.chat_timeout_s, args.seed)
        print(f"load: {args.clients} clients for {args.seconds:.0f} s", file=sys.stderr)
        sampler = asyncio.gather(clock.run_for(args.seconds), backlog.run_for(args.seconds))
        outcomes = await drive(http, plan, lambda: clock.world_time)
        during, owed_during = await sampler
        cpu_end, load_during = cpu.snapshot(), os.getloadavg()
        seq_end = await _max_seq(conn)
        stored = {"baseline": await _types(conn, since, seq_mid),
                  "load": await _types(conn, seq_mid, seq_end)}
        after = await clock.run_for(args.after_seconds) if args.after_seconds > 0 else None
        events = await check_events(url, WORLD, since, outcomes)
        replies = await check_replies(url, outcomes, args.drain_seconds)
        path = await _chat_path(conn, seq_mid, seq_end)
    n = len(npcs)

    def window(w: dict[str, float] | None) -> dict[str, float] | None:
        return None if w is None else w | {"npc_steps_per_s": round(w["steps_per_s"] * n, 1)}

    ratio = during["steps_per_s"] / before["steps_per_s"] if before["steps_per_s"] else float("nan")
    requests = summarise(outcomes, args.seconds)
    cpu_baseline, cpu_load = ProcessCpu.diff(cpu_base, cpu_mid), ProcessCpu.diff(cpu_mid, cpu_end)
    fit = capacity(cpu_baseline, cpu_load, baseline_steps=int(before["steps"]),
                   baseline_seconds=before["seconds"], load_steps=int(during["steps"]),
                   load_seconds=during["seconds"], cores=os.cpu_count() or 1,
                   requests=sum(k["requests"] for k in requests["kinds"].values()))
    return {
        "config": {k: v for k, v in vars(args).items() if k != "json"} | {"npcs": n},
        "machine": {"cpus": os.cpu_count(), "load_before": load_before, "load_end_of_load": load_during},
        "step_rate": {"before": window(before), "during": window(during), "after": window(after),
                      "ratio_during_to_before": round(ratio, 3)},
        "barrier_backlog": {"before": owed_before, "during": owed_during},
        "requests": requests,
        "events": events,
        "chat_replies": replies,
        "events_stored": stored,
        "chat_path_ms": path,
        "cpu_seconds": {"baseline": cpu_baseline, "load": cpu_load},
        "capacity": fit.as_dict(),
    }


async def _max_seq(conn: psycopg.AsyncConnection[Any]) -> int:
    row = await (await conn.execute("SELECT coalesce(max(seq), 0) FROM events")).fetchone()
    return int(row[0]) if row else 0


async def _types(conn: psycopg.AsyncConnection[Any], after: int, upto: int) -> dict[str, int]:
    """Events stored in a window (by seq), by type, most first: what the town and the clients cost."""
    cur = await conn.execute("SELECT type, count(*) FROM events WHERE seq > %s AND seq <= %s GROUP BY type"
                             " ORDER BY count(*) DESC", (after, upto))
    return {str(t): int(n) for t, n in await cur.fetchall()}


async def _chat_path(
    conn: psycopg.AsyncConnection[Any], after: int, upto: int
) -> dict[str, dict[str, float]]:
    """Where a chat's time went, from the log (ms after the chat was stored, p50/p95): its first retrieval
    stored, dialogue's transaction begun (the claim's processed_at; the model call comes before it), the reply
    stored."""
    cur = await conn.execute(
        "SELECT extract(epoch FROM p.processed_at - s.recorded_at) * 1000,"
        " extract(epoch FROM (SELECT min(a.recorded_at) FROM events a WHERE a.causation_id = s.event_id"
        "   AND a.type = 'MemoriesAccessed') - s.recorded_at) * 1000,"
        " extract(epoch FROM r.recorded_at - s.recorded_at) * 1000"
        " FROM events s JOIN events r ON r.causation_id = s.event_id AND r.type = 'NpcReplied'"
        " LEFT JOIN processed_events p ON p.consumer = 'dialogue' AND p.event_id = s.event_id"
        " WHERE s.type = 'PlayerSpoke' AND s.seq > %s AND s.seq <= %s", (after, upto))
    rows = await cur.fetchall()

    def pct(values: list[float]) -> dict[str, float]:
        values = sorted(values)
        if not values:
            return {}
        return {"p50": round(values[len(values) // 2], 1), "p95": round(values[int(len(values) * 0.95)], 1)}

    return {"to_dialogue_transaction": pct([float(a) for a, _, _ in rows if a is not None]),
            "to_first_retrieval": pct([float(b) for _, b, _ in rows if b is not None]),
            "to_reply_stored": pct([float(c) for _, _, c in rows if c is not None])}


def _verdict(r: dict[str, Any]) -> dict[str, bool]:
    req, ev = r["requests"], r["events"]
    kinds = [k for k in ("perception", "chat") if req["kinds"][k]["accepted"]]
    return {
        "p95 <= 500 ms (every kind)": all(req["kinds"][k]["latency_ms"]["p95"] <= 500 for k in kinds),
        "no 5xx": req["server_errors_5xx"] == 0,
        "town keeps >= 50 % of its step rate": r["step_rate"]["ratio_during_to_before"] >= 0.5,
        "exactly one event per accepted request": ev["exactly_one_event"] == ev["accepted"],
    }


def _print(r: dict[str, Any]) -> None:
    c, m, s, req = r["config"], r["machine"], r["step_rate"], r["requests"]
    print(f"{c['clients']} clients x {c['seconds']:.0f} s, chat share {c['chat_share']:.0%}, think "
          f"{c['think_ms']:.0f} ms, {c['npcs']} NPCs; {m['cpus']} cores, load average (1 min) "
          f"{m['load_before'][0]:.2f} before the baseline, {m['load_end_of_load'][0]:.2f} at the load's end")
    print("| kind | requests | accepted | req/s | p50 ms | p95 ms | p99 ms | max ms | statuses |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for kind, k in req["kinds"].items():
        lat = k["latency_ms"]
        print(f"| {kind} | {k['requests']} | {k['accepted']} | {k['per_second']} | {lat['p50']} "
              f"| {lat['p95']} | {lat['p99']} | {lat['max']} | {k['statuses']} |")
    chat = req["kinds"]["chat"]
    print(f"chats replied within their timeout: {chat['replied_in_time']}, answered 202 pending: "
          f"{chat['pending_202']}; replays not matching the first answer: "
          f"{req['kinds']['replay']['mismatched']}")
    print(f"5xx: {req['server_errors_5xx']}  no answer: {req['no_answer']}  4xx: {req['client_errors_4xx']}  "
          f"retries: {req['retried']}")
    for detail, count in req["refusals"].items():
        print(f"  refused {count}x: {detail}")
    for name in ("before", "during", "after"):
        if (w := s[name]) is not None:
            print(f"town {name:6}: {w['steps']} steps in {w['seconds']} s = {w['steps_per_s']} steps/s, "
                  f"{w['npc_steps_per_s']} NPC-steps/s")
    print(f"step rate during / before: {s['ratio_during_to_before']:.2f}")
    for name, b in r["barrier_backlog"].items():
        print(f"barrier backlog {name}: nothing owed in {b['idle_share']:.0%} of samples, mean outbox "
              f"{b['mean_outbox']}, mean owed {b['mean_owed']}")
    print(f"events: {r['events']}")
    print(f"chat replies: {r['chat_replies']}")
    print(f"chat path (ms from the chat stored): {r['chat_path_ms']}")
    for name, types in r["events_stored"].items():
        listed = ", ".join(f"{k} {v}" for k, v in types.items())
        print(f"events stored, {name}: {sum(types.values())} ({listed})")
    for name, spent in r["cpu_seconds"].items():
        print(f"CPU seconds, {name}: " + ", ".join(f"{k} {v}" for k, v in spent.items()))
    f = r["capacity"]
    print(f"capacity: the town took {f['town_cpu_s_per_step']} CPU-s a step before the load; the requests "
          f"{f['requests_cpu_s']} CPU-s ({f['cpu_ms_per_request']} ms each, at least); keeping "
          f"{f['share']:.0%} of the step rate with them needs {f['needed_cpu_s']} CPU-s of the "
          f"{f['available_cpu_s']} the cores give in the window (used: {f['used_cpu_s']}): "
          + ("fits" if f["fits"] else "does NOT fit on this machine"))
    for target, met in r["verdict"].items():
        print(f"{'met    ' if met else 'MISSED '} {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the load")
    parser.add_argument("--baseline-seconds", type=float, default=30.0)
    parser.add_argument("--after-seconds", type=float, default=15.0, help="window after the load (0: none)")
    parser.add_argument("--warmup-steps", type=int, default=30)
    parser.add_argument("--chat-share", type=float, default=0.3)
    parser.add_argument("--think-ms", type=float, default=1000.0, help="mean pause before each request")
    parser.add_argument("--resend-share", type=float, default=0.05)
    parser.add_argument("--chat-timeout-s", type=float, default=10.0)
    parser.add_argument("--drain-seconds", type=float, default=60.0, help="wait for the chats' replies")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep-logs", action="store_true")
    parser.add_argument("--instances", default="", help="npcworld run --instances, e.g. memory=2,planning=2")
    parser.add_argument("--json", type=Path, default=None, help="also write the report here as JSON")
    args = parser.parse_args()
    unwind_on_term()
    with Town(args.keep_logs, args.instances) as town:
        report = asyncio.run(_measure(town, args))
    report["verdict"] = _verdict(report)
    _print(report)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
