"""The clients of the town-load bench (perceptions and chats over the public API) and the check that every
accepted request left exactly one event in the store."""

from __future__ import annotations

import asyncio
import random
import re
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg

from npcworld.shredding import reveal

ACCEPTED = (200, 201, 202)
_TOKEN = re.compile(r"\[(load-[0-9a-f]+-\d+-\d+)\]")
_LINES = ("Any news from the market?", "What are you up to?", "Seen anyone at the cafe?", "Nice weather?")


@dataclass
class Outcome:
    """One request as the client saw it: its final status (0: no answer) and latency, and what it returned."""

    kind: str  # "perception", "chat", or "replay" (the same request resent with its Idempotency-Key)
    token: str
    status: int
    latency_ms: float
    event_id: str | None = None
    replayed_ok: bool = True  # for "replay": answered as a replay with the first answer's event id
    retries: int = 0
    detail: str = ""  # a refused request's problem title and detail


@dataclass
class LoadPlan:
    """What the clients send: a share of chats, a mean think time, and how often a request is resent."""

    world: str
    npcs: list[str]
    clients: int
    seconds: float
    chat_share: float
    think_ms: float
    resend_share: float
    chat_timeout_s: float
    seed: int
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:10])


async def drive(
    http: httpx.AsyncClient, plan: LoadPlan, world_time: Callable[[], str]
) -> list[Outcome]:
    """Run ``plan.clients`` clients until ``plan.seconds`` have passed; every outcome, in no order."""
    outcomes: list[Outcome] = []
    deadline = time.monotonic() + plan.seconds

    async def client(idx: int) -> None:
        rng = random.Random(plan.seed * 1000 + idx)
        for n in range(1_000_000):  # bounded; the deadline ends it long before
            if plan.think_ms > 0:
                pause = rng.expovariate(1000 / plan.think_ms)
                await asyncio.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            if time.monotonic() >= deadline:
                return
            kind = "chat" if rng.random() < plan.chat_share else "perception"
            token = f"load-{plan.run_id}-{idx}-{n}"
            npc = rng.choice(plan.npcs)
            url, body = _request(plan, kind, npc, idx, token, world_time())
            key = uuid.uuid4().hex
            first = await _send(http, kind, token, url, body, key)
            outcomes.append(first)
            if first.status in ACCEPTED and rng.random() < plan.resend_share:
                again = await _send(http, "replay", token, url, body, key)
                again.replayed_ok = again.event_id == first.event_id and again.status == first.status
                outcomes.append(again)

    await asyncio.gather(*(client(i) for i in range(plan.clients)))
    return outcomes


def _request(
    plan: LoadPlan, kind: str, npc: str, idx: int, token: str, now: str
) -> tuple[str, dict[str, Any]]:
    base = f"/v1/worlds/{plan.world}/npcs/{npc}"
    if kind == "chat":
        text = f"{_LINES[idx % len(_LINES)]} [{token}]"
        body = {"player_id": f"load-player-{idx}", "text": text, "timeout_s": plan.chat_timeout_s}
        return f"{base}/chat", body
    text = f"A traveller in a red coat waves at {npc} [{token}]"
    return f"{base}/perceptions", {"description": text, "world_time": now}


async def _send(
    http: httpx.AsyncClient, kind: str, token: str, url: str, body: dict[str, Any], key: str
) -> Outcome:
    """POST with an Idempotency-Key; a request that got no answer is sent once more with the same key,
    and a 429 again after its Retry-After (both as a careful client would)."""
    start = time.perf_counter()
    status, event_id, replayed, retries, detail = 0, None, False, 0, ""
    for attempt in range(3):
        try:
            r = await http.post(url, json=body, headers={"Idempotency-Key": key})
        except httpx.TransportError:
            status = 0
        else:
            status = r.status_code
            replayed = r.headers.get("idempotent-replayed") == "true"
            if status in ACCEPTED:
                event_id = str(r.json()["event_id"])
            else:
                detail = f"{status} {r.text[:200]}"
            if status == 429 and attempt < 2:
                retries += 1
                await asyncio.sleep(float(r.headers.get("retry-after", "1")))
                continue
        if status != 0 or attempt == 2:
            break
        retries += 1
        await asyncio.sleep(0.5)
    latency = (time.perf_counter() - start) * 1000
    out = Outcome(kind, token, status, latency, event_id, retries=retries, detail=detail)
    if kind == "replay":
        out.replayed_ok = replayed
    return out


def percentiles(values: list[float]) -> dict[str, float]:
    """p50/p95/p99/max of ``values`` in ms (inclusive method; NaN when there are none)."""
    if len(values) < 2:
        only = values[0] if values else float("nan")
        return {"p50": only, "p95": only, "p99": only, "max": only}
    q = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": q[49], "p95": q[94], "p99": q[98], "max": max(values)}


def summarise(outcomes: list[Outcome], seconds: float) -> dict[str, Any]:
    """Per kind: requests, accepted, requests/s, accepted latency and statuses; 5xx and no answer apart."""
    kinds: dict[str, Any] = {}
    for kind in ("perception", "chat", "replay"):
        mine = [o for o in outcomes if o.kind == kind]
        accepted = [o.latency_ms for o in mine if o.status in ACCEPTED]
        kinds[kind] = {
            "requests": len(mine),
            "accepted": len(accepted),
            "per_second": round(len(mine) / seconds, 2),
            "latency_ms": {k: round(v, 1) for k, v in percentiles(accepted).items()},
            "statuses": dict(sorted(Counter(str(o.status) for o in mine).items())),
        }
    kinds["chat"]["replied_in_time"] = sum(o.kind == "chat" and o.status == 200 for o in outcomes)
    kinds["chat"]["pending_202"] = sum(o.kind == "chat" and o.status == 202 for o in outcomes)
    kinds["replay"]["mismatched"] = sum(o.kind == "replay" and not o.replayed_ok for o in outcomes)
    return {
        "kinds": kinds,
        "server_errors_5xx": sum(o.status >= 500 for o in outcomes),
        "no_answer": sum(o.status == 0 for o in outcomes),
        "client_errors_4xx": sum(400 <= o.status < 500 for o in outcomes),
        "retried": sum(o.retries for o in outcomes),
        "refusals": dict(Counter(o.detail for o in outcomes if o.detail).most_common(5)),
    }


async def check_events(
    database_url: str, world: str, since_seq: int, outcomes: list[Outcome]
) -> dict[str, int]:
    """Match every request's token to the events it left (ObservationMade or PlayerSpoke) by text and id.

    Accepted requests must each have exactly one event, with the id they returned; refused ones none.
    """
    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        # A chat's text is stored sealed with its player's key (npcworld.shredding): opened here, as any
        # reader of the log opens it.
        cur = await conn.execute(
            "SELECT type, payload, event_id::text FROM events"
            " WHERE seq > %s AND world_id = %s AND type IN ('ObservationMade', 'PlayerSpoke')",
            (since_seq, world),
        )
        rows = await cur.fetchall()
        await reveal(conn, [(kind, payload) for kind, payload, _ in rows])
    found: dict[str, list[str]] = {}
    for _, payload, event_id in rows:
        text = payload.get("description") or payload.get("text")
        if (m := _TOKEN.search(text or "")) is not None:
            found.setdefault(m.group(1), []).append(event_id)
    firsts = [o for o in outcomes if o.kind != "replay"]
    accepted = [o for o in firsts if o.status in ACCEPTED]
    refused = [o for o in firsts if o.status not in ACCEPTED]
    def one(o: Outcome) -> list[str]:
        return found.get(o.token, [])

    return {
        "accepted": len(accepted),
        "exactly_one_event": sum(one(o) == [o.event_id] for o in accepted),
        "missing": sum(not one(o) for o in accepted),
        "doubled": sum(len(one(o)) > 1 for o in accepted),
        "other_id": sum(len(one(o)) == 1 and one(o) != [o.event_id] for o in accepted),
        "refused_with_event": sum(bool(one(o)) for o in refused),
    }


async def check_replies(
    database_url: str, outcomes: list[Outcome], wait_s: float
) -> dict[str, int]:
    """Wait (at most ``wait_s``) until every accepted chat has its NpcReplied, then count replies per chat."""
    chats = {o.event_id for o in outcomes if o.kind == "chat" and o.status in ACCEPTED and o.event_id}
    counts: dict[str, int] = {}
    deadline = time.monotonic() + wait_s
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        while True:
            cur = await conn.execute(
                "SELECT causation_id::text, count(*) FROM events WHERE type = 'NpcReplied'"
                " AND causation_id = ANY(%s::uuid[]) GROUP BY 1",
                (list(chats),),
            )
            counts = {str(c): int(n) for c, n in await cur.fetchall()}
            if len(counts) == len(chats) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
    return {
        "chats": len(chats),
        "one_reply": sum(n == 1 for n in counts.values()),
        "no_reply": len(chats) - len(counts),
        "doubled": sum(n > 1 for n in counts.values()),
    }
