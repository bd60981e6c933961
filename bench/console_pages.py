"""Server time of each console page on a large world: ``python -m bench.console_pages``.

Builds a world of ``--npcs`` NPCs (default 1,000) on the demo template's map with ``--events`` events (default
1,000,000) in a fresh embedded PostgreSQL: per NPC and world step a move and an action, and the memories,
retrievals, decisions, plans, talk and relationships an NPC's day brings, with a model call per decision
(written straight into the event store, as the services would have appended them), and a fork of it at its
middle world time (inheriting the history, then its own events, which differ a world minute after the fork).
Then
it starts a gateway on it, signs in to the console and requests every page ``--repeat`` times (and re-runs a
decision as a dry run with the offline provider), reporting the server time the gateway measured (the
``Server-Timing`` header: from the request reaching the console's handler to the page rendered) and the time
the client saw, median and worst.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg

from launcher.embedded.postgres import start_postgres, stop_postgres
from launcher.private_ports import free_port
from npcworld.db import apply_migrations

WORLD = "big-town"
# Per NPC and step: the event types a busy world appends (their share of the log).
_MIX = ("NpcsMoved", "ActionStarted", "ActionDecided", "ObservationMade", "MemoryRecorded",
        "MemoriesAccessed", "UtteranceSpoken", "RelationshipChanged", "WorldTicked", "PlanRevised")


def build(url: str, npcs: int, events: int, fork: bool = True) -> tuple[str, str]:
    """The world (and with ``fork`` its fork), its tenant and an API key; returns (key, an ActionDecided
    event id with a full why)."""
    import asyncio

    from services.gateway.repository import GatewayRepository

    async def tenant() -> tuple[str, str]:
        async with await psycopg.AsyncConnection.connect(url) as conn, conn.transaction():
            return await GatewayRepository(conn).create_tenant("bench")

    tenant_id, key = asyncio.run(tenant())
    steps = max(1, events // (npcs * len(_MIX)))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET synchronous_commit = off")
        conn.execute(_WORLD_SQL, {"t": tenant_id, "w": WORLD, "n": npcs})
        conn.execute(_EVENTS_SQL, {"t": tenant_id, "w": WORLD, "n": npcs, "steps": steps})
        conn.execute(_CALLS_SQL, {"t": tenant_id, "w": WORLD})
        if fork:
            _fork(conn, tenant_id)
        conn.execute(_HEARTBEATS_SQL)
        conn.execute("VACUUM ANALYZE events")
        why = conn.execute("SELECT event_id::text FROM events WHERE type = 'ActionDecided'"
                           " AND in_world(tenant_id, world_id, %s, %s) AND npc_id = 'npc-1'"
                           " ORDER BY seq DESC LIMIT 1", (tenant_id, WORLD)).fetchone()
        assert why is not None
    return key, str(why[0])


_WORLD_SQL = """
WITH tpl AS (SELECT %(t)s AS t, %(w)s AS w)
INSERT INTO events (event_id, stream_id, version, type, schema_version, tenant_id, world_id, npc_id,
    world_time,
                    recorded_at, correlation_id, payload)
SELECT gen_random_uuid(), 'world-' || tpl.w, v, type, 1, tpl.t, tpl.w, npc, '2023-02-13 07:00Z',
       now(), gen_random_uuid(), payload
FROM tpl, (
  SELECT 1 AS v, 'WorldCreated' AS type, NULL AS npc,
         jsonb_build_object('name', 'Big town', 'template', 'brindle-hollow', 'start_time',
             '2023-02-13T07:00:00Z')
         AS payload
  UNION ALL
  SELECT 2, 'WorldDefined', NULL, jsonb_build_object('source', 'template', 'sectors', jsonb_build_array(
           jsonb_build_object('name', 'Quill house', 'arenas', jsonb_build_array(
             jsonb_build_object('name', 'kitchen', 'area', jsonb_build_array(2, 2, 5, 10)),
             jsonb_build_object('name', 'bedroom', 'area', jsonb_build_array(6, 2, 9, 10)))),
           jsonb_build_object('name', 'Lantern Cafe', 'arenas', jsonb_build_array(
             jsonb_build_object('name', 'cafe floor', 'area', jsonb_build_array(13, 2, 20, 10))))),
         'tile_map', jsonb_build_object('width', 30, 'height', 14, 'rows',
           (SELECT jsonb_agg(repeat('.', 30)) FROM generate_series(1, 14))))
  UNION ALL
  SELECT 2 + i, 'NpcCreated', 'npc-' || i, jsonb_build_object('npc_id', 'npc-' || i, 'name', 'Npc ' || i,
         'age', 30, 'traits', jsonb_build_array('kind'), 'seed', 'lives in the town',
         'location', %(w)s || ':Quill house:bedroom')
  FROM generate_series(1, %(n)s) i
) s
"""

_EVENTS_SQL = """
INSERT INTO events (event_id, stream_id, version, type, schema_version, tenant_id, world_id, npc_id,
    world_time,
                    recorded_at, causation_id, correlation_id, payload)
SELECT CASE WHEN type = 'WorldTicked' AND i = 1 THEN md5(%(w)s || 'tick' || step)::uuid
            ELSE gen_random_uuid() END, 's-' || i || '-' || k, step, type, 1, %(t)s, %(w)s,
       CASE WHEN type = 'WorldTicked' THEN NULL ELSE 'npc-' || i END,
       timestamptz '2023-02-13 07:00Z' + make_interval(secs => step * 10), now(),
       CASE WHEN type IN ('ActionDecided', 'MemoriesAccessed', 'PlanRevised')
            THEN md5(%(w)s || 'tick' || step)::uuid END,
       gen_random_uuid(),
       CASE type
         WHEN 'NpcsMoved' THEN jsonb_build_object('moves', jsonb_build_array(jsonb_build_object(
           'npc_id', 'npc-' || i, 'path', %(w)s || ':Lantern Cafe:cafe floor',
           'tile', jsonb_build_array(13 + (i + step) %% 8, 2 + (i * 7 + step) %% 9))), 'source',
               'world_state')
         WHEN 'ActionStarted' THEN jsonb_build_object('description', 'serving coffee, round ' || step,
           'emoji', '☕', 'ends_at', '2023-02-13T08:00:00Z', 'route', '[]'::jsonb)
         WHEN 'ActionDecided' THEN jsonb_build_object('description', 'serving coffee, round ' || step,
           'emoji', '☕', 'start', '2023-02-13T07:00:00Z', 'duration_minutes', 10,
           'location_path', %(w)s || ':Lantern Cafe:cafe floor')
         WHEN 'MemoryRecorded' THEN jsonb_build_object('memory_id', md5('m' || i || '-' || step)::uuid,
           'kind', 'observation', 'description', 'saw a customer at step ' || step, 'importance',
               1 + step %% 9,
           'created_at', to_char((timestamptz '2023-02-13 07:00Z' + make_interval(secs => step * 10))
                                 AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           'evidence', '[]'::jsonb, 'embedding_model', 'bench')
         WHEN 'MemoriesAccessed' THEN jsonb_build_object('memory_ids', jsonb_build_array(
           md5('m' || i || '-' || greatest(step - 1, 1))::uuid), 'query', 'what next?',
           'accessed_at', '2023-02-13T07:00:00Z')
         WHEN 'UtteranceSpoken' THEN jsonb_build_object('conversation_id', 'c-' || i || '-' || step / 50,
           'listener_id', 'npc-' || (i %% %(n)s + 1), 'text', 'hello again', 'turn', 1 + step %% 50)
         WHEN 'RelationshipChanged' THEN jsonb_build_object('other_id', 'npc-' || (i %% %(n)s + 1),
           'familiarity', step, 'sentiment', 5 + step %% 5, 'summary', 'they talk often')
         WHEN 'PlanRevised' THEN jsonb_build_object('from_time', '2023-02-13T07:00:00Z', 'reason',
             'a customer',
           'items', '[]'::jsonb)
         ELSE jsonb_build_object('step', step, 'description', 'something happened')
       END
FROM generate_series(1, %(steps)s) step, generate_series(1, %(n)s) i,
     unnest(%(mix)s::text[]) WITH ORDINALITY AS m(type, k)
ORDER BY step, i, k
""".replace("%(mix)s", "ARRAY['" + "','".join(_MIX) + "']")

_CALLS_SQL = """
INSERT INTO llm_calls (tenant_id, world_id, npc_id, prompt_kind, template_version, request_hash, model,
    provider,
                       parameters, request, response, outcome, cause_event_id, tokens_in, tokens_out,
                           latency_ms, inputs)
SELECT %(t)s, %(w)s, npc_id, 'reflection_questions', 1, 'h', 'npcworld-offline-1', 'offline', '{}',
       '[{"role": "user", "content": "What next?"}]',
       '{"questions": ["What next?", "Who is at the cafe?", "Why coffee?"]}', 'ok', causation_id, 120, 40,
       3.5,
       jsonb_build_object('npc_name', npc_id, 'memories', jsonb_build_array(
         jsonb_build_object('id', 'm1', 'description', 'served coffee at the cafe', 'importance', 3),
         jsonb_build_object('id', 'm2', 'description', 'a customer asked about the party', 'importance', 6)))
FROM events WHERE tenant_id = %(t)s AND type = 'ActionDecided'
"""

def _fork(conn: psycopg.Connection[Any], tenant_id: str) -> None:
    """The fork of the big world at its middle world time, made by ``fork_world`` (it inherits the history),
    then its own events: the source's later ones, with what the NPCs do changed a world minute after the fork
    point."""
    import asyncio

    from npcworld.fork import fork_world

    conn.execute("ANALYZE events")
    row = conn.execute("SELECT min(world_time) + (max(world_time) - min(world_time)) / 2, max(seq)"
                       " FROM events"
                       " WHERE in_world(tenant_id, world_id, %s, %s)", (tenant_id, WORLD)).fetchone()
    assert row is not None
    at, last = row

    async def fork() -> None:
        async with await psycopg.AsyncConnection.connect(conn.info.dsn) as c, c.transaction():
            await fork_world(c, tenant_id=tenant_id, source_world_id=WORLD, at=at, new_world_id=FORK)

    asyncio.run(fork())
    conn.execute(_FORK_SQL, {"t": tenant_id, "w": WORLD, "f": FORK, "at": at, "last": last})


_HEARTBEATS_SQL = """
INSERT INTO consumer_heartbeats (consumer, types, llm_breakers)
SELECT s, ARRAY['ObservationMade', 'WorldTicked', 'NpcsMoved'], jsonb_build_array(jsonb_build_object(
       'provider', 'openai', 'state', 'open', 'since', now(), 'failures', 5, 'last_failure_at', now(),
       'last_failure', 'HTTP 503'))
FROM unnest(ARRAY['memory', 'planning', 'perception']) s
"""
FORK = "big-fork"
# The fork's own events: the source's after the fork point (in streams of the fork's own), with what the NPCs
# do changed a world minute after it.
_FORK_SQL = """
INSERT INTO events (event_id, stream_id, version, type, schema_version, tenant_id, world_id, npc_id,
                    world_time, recorded_at, causation_id, correlation_id, payload)
SELECT gen_random_uuid(), %(f)s || ':' || stream_id || '-own', version, type, schema_version, tenant_id,
       %(f)s, npc_id, world_time, now(), NULL, correlation_id,
       CASE WHEN world_time > at + interval '1 minute' AND type = 'ActionStarted'
            THEN jsonb_set(payload, '{description}', '"reading in the park"')
            ELSE replace(payload::text, %(w)s || ':', %(f)s || ':')::jsonb END
FROM events, (SELECT %(at)s::timestamptz AS at) fork WHERE in_world(tenant_id, world_id, %(t)s, %(w)s)
 AND seq <= %(last)s AND world_time > at
ORDER BY seq
"""


def measure(
    url: str, key: str, why: str, repeat: int, npc: str
) -> dict[str, tuple[float, float, float, float]]:
    pages: dict[str, str | tuple[str, dict[str, str]]] = {
        "worlds": "/console/worlds",
        "world view (last 2 world hours)": f"/console/worlds/{WORLD}",
        "NPC inspector": f"/console/worlds/{WORLD}/npcs/{npc}",
        "why": f"/console/why/{why}",
        "operations": "/console/ops",
        "event log (world)": f"/console/events?world={WORLD}",
        "event log (one NPC, one type)": f"/console/events?world={WORLD}&npc=npc-7&type=ActionDecided",
        "fork's world view (inherited history)": f"/console/worlds/{FORK}",
        "fork's NPC inspector": f"/console/worlds/{FORK}/npcs/{npc}",
        "fork's event log": f"/console/events?world={FORK}",
        "fork beside its source": f"/console/worlds/{FORK}/fork-diff",
        "fork beside its source (NPC, type)": f"/console/worlds/{FORK}/fork-diff?npc=npc-7"
                                              "&type=ActionStarted",
    }
    out = {}
    with httpx.Client(base_url=url, timeout=60) as client:
        assert client.post("/console/login", data={"api_key": key}).status_code == 303
        first = client.get(f"/console/worlds/{FORK}/fork-diff").text
        following = re.search(r'id="next" href="\?([^"]+)"', first)
        assert following is not None, "the fork comparison has no second page"
        pages["fork beside its source (page 2)"] = (f"/console/worlds/{FORK}/fork-diff?"
                                                    f"{html.unescape(following[1])}")
        shown = client.get(f"/console/why/{why}").text
        token, call = re.search(r'name="csrf" value="([^"]+)"', shown), re.search(r'id="call-(\d+)"', shown)
        assert token is not None and call is not None, "the why page offers no re-run"
        pages["re-run a decision (offline, dry run)"] = (
            f"/console/why/{why}/calls/{call[1]}/rerun", {"csrf": token[1], "model": "npcworld-offline-1"})
        for name, target in pages.items():
            out[name] = _timed(client, target, repeat)
    return out


def _timed(
    client: httpx.Client, target: str | tuple[str, dict[str, str]], repeat: int
) -> tuple[float, float, float, float]:
    """Server time (median, max) and client time (median, max) of ``repeat`` requests after a warm-up."""
    server, wall = [], []
    for _ in range(repeat + 1):
        started = time.perf_counter()
        response = client.get(target) if isinstance(target, str) else client.post(target[0], data=target[1])
        took = (time.perf_counter() - started) * 1000
        assert response.status_code == 200, (target, response.status_code)
        server.append(float(response.headers["server-timing"].split("dur=")[1]))
        wall.append(took)
    server, wall = server[1:], wall[1:]  # the first request warms the templates and plans
    return statistics.median(server), max(server), statistics.median(wall), max(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--npcs", type=int, default=1000)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="npcworld-console-bench-") as root:
        pgdata = Path(root) / "pgdata"
        url = start_postgres(pgdata)
        gateway = None
        try:
            apply_migrations(url)
            started = time.perf_counter()
            key, why = build(url, args.npcs, args.events)
            with psycopg.connect(url) as conn:
                stored = conn.execute("SELECT count(*) FROM events").fetchone()
            print(f"world: {args.npcs} NPCs, {stored[0] if stored else 0:,} events"
                  f" (built in {time.perf_counter() - started:.0f} s); load average {os.getloadavg()[0]:.1f}")
            port = free_port()
            gateway = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "services.gateway.api:create_app", "--factory", "--port",
                 str(port), "--log-level", "warning"],
                env={**os.environ, "DATABASE_URL": url, "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1"})
            base = f"http://127.0.0.1:{port}"
            for _ in range(300):
                try:
                    if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.2)
            print(f"{'page':34} {'server p50':>10} {'server max':>10} {'client p50':>10}"
                  f" {'client max':>10}  (ms)")
            npc = f"npc-{max(1, args.npcs // 2)}"
            for name, (p50, worst, c50, cworst) in measure(base, key, why, args.repeat, npc).items():
                print(f"{name:34} {p50:10.1f} {worst:10.1f} {c50:10.1f} {cworst:10.1f}")
        finally:
            if gateway is not None:
                gateway.terminate()
                gateway.wait(10)
            stop_postgres(pgdata)


if __name__ == "__main__":
    main()
