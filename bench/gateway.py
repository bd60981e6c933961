"""Gateway benchmark: requests/s and latency p50/p95 of the main read endpoints and of posting perceptions.

Run: python -m bench.gateway [--seconds 10] [--concurrency 16] [--npcs 25] [--events 2000]
     [--loop uvloop|asyncio] [--http httptools|h11]
One uvicorn worker against embedded Postgres (in a temporary directory); the load generator runs in this
process on the same machine, so both share its cores. Every request is authenticated (key lookup, rate
limit bucket) as in production. The gateway's CPU time per request (from /proc) varies far less with
other load on the machine than requests/s and latency do.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg

from bench._stack import cpu_seconds
from launcher.embedded.postgres import start_postgres, stop_postgres
from launcher.private_ports import free_port
from npcworld.db import apply_migrations
from services.gateway.repository import KeyRepository

T0 = "2023-02-13T07:00:00+00:00"
WORLD = "bench-world"


async def _key(database_url: str) -> str:
    async with await psycopg.AsyncConnection.connect(database_url) as conn, conn.transaction():
        keys = KeyRepository(conn)
        tenant = await keys.create_tenant("bench")
        _, secret = await keys.create_key(
            tenant.tenant_id, "bench", ("read", "write", "admin"), rate_per_second=1e6, burst=1_000_000
        )
    return secret


async def _seed(client: httpx.AsyncClient, npcs: int, events: int) -> None:
    (
        await client.post("/v1/worlds", json={"world_id": WORLD, "name": "Bench", "start_time": T0})
    ).raise_for_status()
    for i in range(npcs):
        (
            await client.post(f"/v1/worlds/{WORLD}/npcs", json={"npc_id": f"npc{i}", "name": f"N{i}"})
        ).raise_for_status()
    sem = asyncio.Semaphore(16)

    async def post(i: int) -> None:
        async with sem:
            r = await client.post(
                f"/v1/worlds/{WORLD}/npcs/npc{i % npcs}/perceptions",
                json={"description": f"seed {i}", "world_time": T0},
            )
            r.raise_for_status()

    await asyncio.gather(*(post(i) for i in range(events)))


async def _load(
    client: httpx.AsyncClient,
    request: Callable[[int], tuple[str, str, object]],
    seconds: float,
    concurrency: int,
) -> tuple[float, list[float], int]:
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds
    counter = 0

    async def worker() -> None:
        nonlocal errors, counter
        while time.perf_counter() < deadline:
            counter += 1
            method, url, body = request(counter)
            start = time.perf_counter()
            r = await client.request(method, url, json=body)
            latencies.append((time.perf_counter() - start) * 1000)
            errors += r.status_code >= 400

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return len(latencies) / (time.perf_counter() - began), latencies, errors


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


async def _run(base: str, key: str, args: argparse.Namespace, gateway_pid: int) -> None:
    limits = httpx.Limits(max_connections=args.concurrency, max_keepalive_connections=args.concurrency)
    async with httpx.AsyncClient(
        base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30, limits=limits
    ) as client:
        await _seed(client, args.npcs, args.events)
        cases: dict[str, Callable[[int], tuple[str, str, object]]] = {
            "GET /v1/worlds/{id}": lambda i: ("GET", f"/v1/worlds/{WORLD}", None),
            "GET /v1/worlds": lambda i: ("GET", "/v1/worlds", None),
            "GET /v1/worlds/{id}/npcs": lambda i: ("GET", f"/v1/worlds/{WORLD}/npcs", None),
            "GET /v1/worlds/{id}/events?limit=100": lambda i: (
                "GET",
                f"/v1/worlds/{WORLD}/events?limit=100",
                None,
            ),
            "POST /v1/worlds/{id}/npcs/{npc}/perceptions": lambda i: (
                "POST",
                f"/v1/worlds/{WORLD}/npcs/npc{i % args.npcs}/perceptions",
                {"description": f"bench {i}", "world_time": T0},
            ),
        }
        print(
            f"concurrency {args.concurrency}, {args.seconds:.0f} s per endpoint, world with {args.npcs} NPCs "
            f"and {args.events} seeded perceptions"
        )
        print("| endpoint | requests/s | p50 ms | p95 ms | gateway CPU ms/request | errors |")
        print("|---|---|---|---|---|---|")
        for name, request in cases.items():
            cpu = cpu_seconds([gateway_pid])
            rate, latencies, errors = await _load(client, request, args.seconds, args.concurrency)
            per_request = (cpu_seconds([gateway_pid]) - cpu) * 1000 / len(latencies)
            print(
                f"| `{name}` | {rate:,.0f} | {_p(latencies, 50):.1f} | {_p(latencies, 95):.1f} "
                f"| {per_request:.2f} | {errors} |"
            )
        print(f"load average after the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--npcs", type=int, default=25)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop",
                        help="the gateway's event loop (npcworld's own: NPCWORLD_EVENT_LOOP)")
    parser.add_argument("--http", choices=("httptools", "h11"), default="httptools",
                        help="uvicorn's HTTP parser")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="npcworld-bench-gw-"))
    pgdata = root / "pgdata"
    proc: subprocess.Popen[bytes] | None = None
    try:
        url = start_postgres(pgdata)
        apply_migrations(url)
        key = asyncio.run(_key(url))
        port = free_port()
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9",
            "LOG_LEVEL": "WARNING",
        }
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "services.gateway.api:create_app",
                "--factory",
                "--port",
                str(port),
                "--log-level",
                "warning",
                "--no-access-log",
                "--loop",
                args.loop,
                "--http",
                args.http,
            ],
            env=env,
        )
        base = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        asyncio.run(_run(base, key, args, proc.pid))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
        stop_postgres(pgdata)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
