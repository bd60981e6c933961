"""Player chat round trip: POST /v1/worlds/{w}/npcs/{n}/chat through the gateway, the event store and outbox
relay, Kafka, the dialogue service (memory retrieval over the memory service's API, one LLM call) and back.

Run: python -m bench.chat_roundtrip [--concurrency 20] [--chats 15] [--npcs 20] [--think-ms 0]
Every process runs as in production (gateway under uvicorn, relay, memory service, dialogue service) on an
embedded Postgres and Tansu broker in a temporary directory. The LLM is the offline provider: zero model
latency, but each call is still recorded in Postgres like a live one, so the figures are the system's own
overhead. ``--concurrency`` players each send ``--chats`` chats one after another (after one warm-up chat
each, not counted) to NPCs that have a few seed memories; the load generator shares the machine's cores.
``--think-ms`` makes each player pause between its lines (exponentially distributed with that mean, seeded),
as a person reading the reply and typing the next line does; 0 sends the next line at once (saturation).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg

from bench._stack import BenchStack, cpu_seconds
from launcher.private_ports import free_port
from services.gateway.repository import KeyRepository

T0 = "2023-02-14T15:00:00+00:00"
WORLD = "bench-chat"
SEED = (
    "{name} runs a stall at the market; {name} is planning a Valentine's Day party at Hobbs Cafe at 5pm; "
    "{name} likes coffee"
)
QUESTIONS = ("Any plans for tonight?", "What do you like?", "Where do you work?", "Have you heard any news?")


async def _key(database_url: str) -> str:
    async with await psycopg.AsyncConnection.connect(database_url) as conn, conn.transaction():
        keys = KeyRepository(conn)
        tenant = await keys.create_tenant("bench")
        _, secret = await keys.create_key(
            tenant.tenant_id, "bench", ("read", "write", "admin"), rate_per_second=1e6, burst=1_000_000
        )
    return secret


def _spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    out = log.open("wb")
    return subprocess.Popen([sys.executable, *args], env=env, stdout=out, stderr=subprocess.STDOUT)


async def _wait_ready(url: str, proc: subprocess.Popen[bytes], what: str) -> None:
    async with httpx.AsyncClient(timeout=1) as client:
        for _ in range(600):
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited at start")
            try:
                if (await client.get(url)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{what} did not become ready")


async def _seed(client: httpx.AsyncClient, npcs: int) -> None:
    (
        await client.post("/v1/worlds", json={"world_id": WORLD, "name": "Bench", "start_time": T0})
    ).raise_for_status()
    for i in range(npcs):
        body = {"npc_id": f"npc{i}", "name": f"Vendor{i}", "seed": SEED.format(name=f"Vendor{i}")}
        (await client.post(f"/v1/worlds/{WORLD}/npcs", json=body)).raise_for_status()


async def _chat(client: httpx.AsyncClient, npc: int, i: int) -> float:
    body = {"player_id": f"p{npc}", "text": QUESTIONS[i % len(QUESTIONS)], "timeout_s": 30}
    start = time.perf_counter()
    r = await client.post(f"/v1/worlds/{WORLD}/npcs/npc{npc}/chat", json=body)
    elapsed = (time.perf_counter() - start) * 1000
    if r.status_code != 200:
        raise RuntimeError(f"chat answered {r.status_code}: {r.text}")
    return elapsed


async def _until_seeded(client: httpx.AsyncClient, npcs: int) -> None:
    """Wait until every NPC's seed memories are in its stream (the memory service consumed NpcCreated)."""
    for _ in range(1200):
        pages = [await client.get(f"/v1/worlds/{WORLD}/npcs/npc{i}/memories") for i in range(npcs)]
        if all(p.status_code == 200 and p.json()["items"] for p in pages):
            return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"seed memories never arrived: {[p.status_code for p in pages]}")


async def _run(
    base: str, key: str, args: argparse.Namespace, cpu: Callable[[], dict[str, float]]
) -> tuple[list[float], float, dict[str, float]]:
    limits = httpx.Limits(
        max_connections=args.concurrency + 4, max_keepalive_connections=args.concurrency + 4
    )
    async with httpx.AsyncClient(
        base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60, limits=limits
    ) as client:
        await _seed(client, args.npcs)
        print("world seeded; waiting for seed memories", file=sys.stderr)
        await _until_seeded(client, args.npcs)
        print("seed memories in; warming up", file=sys.stderr)
        await asyncio.gather(*(_chat(client, p % args.npcs, 0) for p in range(args.concurrency)))  # warm-up
        latencies: list[float] = []

        async def player(p: int) -> None:
            pauses = random.Random(p)
            for i in range(args.chats):
                if args.think_ms > 0:
                    await asyncio.sleep(pauses.expovariate(1000 / args.think_ms))
                latencies.append(await _chat(client, p % args.npcs, i + 1))

        before, began = cpu(), time.perf_counter()
        await asyncio.gather(*(player(p) for p in range(args.concurrency)))
        wall, after = time.perf_counter() - began, cpu()
    return latencies, wall, {name: after[name] - before[name] for name in after}


def _pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _breakdown(database_url: str) -> dict[str, float]:
    """Median ms from the player's line being created in the gateway to: its commit; the memory service's
    retrieval for the reply recorded (relay, Kafka, the dialogue consumer's poll, the scene read, the HTTP
    call, the query embedded and ranked); the LLM call recorded; the dialogue consumer's transaction start;
    the reply created and committed."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            """SELECT extract(epoch FROM pg_xact_commit_timestamp(p.xmin) - p.recorded_at) * 1000,
                      extract(epoch FROM m.recorded_at - p.recorded_at) * 1000,
                      extract(epoch FROM l.created_at - p.recorded_at) * 1000,
                      extract(epoch FROM d.processed_at - p.recorded_at) * 1000,
                      extract(epoch FROM r.recorded_at - p.recorded_at) * 1000,
                      extract(epoch FROM pg_xact_commit_timestamp(r.xmin) - p.recorded_at) * 1000
               FROM events p JOIN events r ON r.causation_id = p.event_id AND r.type = 'NpcReplied'
               JOIN processed_events d ON d.event_id = p.event_id AND d.consumer = 'dialogue'
               CROSS JOIN LATERAL (
                   SELECT min(a.recorded_at) AS recorded_at FROM events a
                   WHERE a.type = 'MemoriesAccessed' AND a.world_id = p.world_id AND a.npc_id = p.npc_id
                     AND a.recorded_at >= p.recorded_at AND a.payload->>'query' = p.payload->>'text') m
               CROSS JOIN LATERAL (
                   SELECT min(c.created_at) AS created_at FROM llm_calls c
                   WHERE c.prompt_kind = 'player_reply' AND c.world_id = p.world_id AND c.npc_id = p.npc_id
                     AND c.created_at >= p.recorded_at) l
               WHERE p.type = 'PlayerSpoke'"""
        ).fetchall()
        llm = conn.execute(
            "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) FROM llm_calls "
            "WHERE prompt_kind = 'player_reply'"
        ).fetchone()
    names = ("committed", "retrieved", "llm_recorded", "consumer_started", "reply_created", "reply_committed")
    out = {
        n: statistics.median(float(r[k]) for r in rows if r[k] is not None) for k, n in enumerate(names)
    }
    out["llm_call"] = float(llm[0]) if llm and llm[0] is not None else float("nan")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--chats", type=int, default=15, help="chats per player")
    parser.add_argument("--npcs", type=int, default=20)
    parser.add_argument("--think-ms", type=float, default=0, help="mean pause between a player's lines")
    args = parser.parse_args()
    procs: list[subprocess.Popen[bytes]] = []
    logs = Path(tempfile.mkdtemp(prefix="npcworld-bench-chat-logs-"))
    print(f"process logs in {logs}", file=sys.stderr)
    with BenchStack() as stack:
        gw_port, mem_port = free_port(), free_port()
        env = {
            **os.environ,
            "KAFKA_FETCH_MAX_WAIT_MS": os.environ.get("KAFKA_FETCH_MAX_WAIT_MS", "10"),
            "DATABASE_URL": stack.database_url,
            "KAFKA_BOOTSTRAP_SERVERS": stack.bootstrap,
            "MEMORY_API_URL": f"http://127.0.0.1:{mem_port}",
            "MEMORY_API_HOST": "127.0.0.1",
            "MEMORY_API_PORT": str(mem_port),
            "LOG_LEVEL": "WARNING",
        }
        try:
            procs.append(_spawn(["-m", "launcher.cli", "relay"], env, logs / "relay.log"))
            mem = _spawn(["-m", "services.memory.consumer"], env, logs / "memory.log")
            procs += [mem, _spawn(["-m", "services.dialogue.consumer"], env, logs / "dialogue.log")]
            gateway = _spawn(
                [
                    "-m",
                    "uvicorn",
                    "services.gateway.api:create_app",
                    "--factory",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(gw_port),
                    "--log-level",
                    "warning",
                ],
                env,
                logs / "gateway.log",
            )
            procs.append(gateway)
            base = f"http://127.0.0.1:{gw_port}"
            asyncio.run(_wait_ready(f"{base}/readyz", gateway, "the gateway"))
            asyncio.run(_wait_ready(f"http://127.0.0.1:{mem_port}/healthz", mem, "the memory service"))
            key = asyncio.run(_key(stack.database_url))
            load = os.getloadavg()[0]
            roles = {"gateway": gateway, "relay": procs[0], "memory": mem, "dialogue": procs[2]}

            def cpu() -> dict[str, float]:
                used = {name: cpu_seconds([proc.pid]) for name, proc in roles.items()}
                broker = stack.broker_pid()
                return used | {
                    "postgres": cpu_seconds(stack.postgres_pids()),
                    "tansu": cpu_seconds([broker] if broker else []),
                    "load generator": cpu_seconds([os.getpid()]),
                }

            latencies, wall, spent = asyncio.run(_run(base, key, args, cpu))
            parts = _breakdown(stack.database_url)
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()  # never leave a process behind on a failed run
                    proc.wait()
    print(
        f"{args.concurrency} concurrent players x {args.chats} chats ({len(latencies)} measured) to "
        f"{args.npcs} NPCs, think time {args.think_ms:.0f} ms; offline LLM (zero model latency); "
        f"load average before: {load:.2f}"
    )
    print("| chats | p50 ms | p95 ms | p99 ms | max ms | mean ms | chats/s |\n|---|---|---|---|---|---|---|")
    print(
        f"| {len(latencies)} | {_pct(latencies, 50):.1f} | {_pct(latencies, 95):.1f} "
        f"| {_pct(latencies, 99):.1f} | {max(latencies):.1f} | {statistics.fmean(latencies):.1f} "
        f"| {len(latencies) / wall:.1f} |"
    )
    per_chat = {name: seconds * 1000 / len(latencies) for name, seconds in spent.items()}
    print(
        f"CPU ms per chat (total {sum(per_chat.values()):.1f}): "
        + ", ".join(f"{name} {ms:.1f}" for name, ms in per_chat.items())
    )
    print(
        "medians after the gateway created the player's line: "
        + ", ".join(f"{name} {ms:.1f} ms" for name, ms in parts.items())
    )


if __name__ == "__main__":
    main()
