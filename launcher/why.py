"""``npcworld why <event-id>``: why an event happened, from the event log alone.

An event's ``causation_id`` names the event whose handling appended it; following it back reaches the
perception, request or clock tick that started the chain. The model calls and retrievals made while that
handling ran name the same event (``npcworld.cause``: ``llm_calls.cause_event_id``, and the
``MemoriesAccessed`` events' causation), so they are found by one index lookup each.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

__all__ = ["Call", "Explanation", "LoggedEvent", "Retrieval", "events_after", "explain", "line_of", "render"]

_MAX_CHAIN = 50
_EVENT = ("SELECT seq, event_id, type, tenant_id, world_id, npc_id, world_time, causation_id, correlation_id,"
          " payload FROM events")


@dataclass(frozen=True)
class LoggedEvent:
    seq: int
    event_id: uuid.UUID
    type: str
    tenant_id: str
    world_id: str
    npc_id: str | None
    world_time: datetime
    causation_id: uuid.UUID | None
    correlation_id: uuid.UUID
    payload: dict[str, Any]


@dataclass(frozen=True)
class Call:
    """One model call made while the cause was handled."""

    id: int
    prompt_kind: str
    template_version: int
    provider: str
    model: str
    outcome: str
    tokens_in: int
    tokens_out: int
    latency_ms: float
    request: list[dict[str, Any]]
    response: Any


@dataclass(frozen=True)
class Retrieval:
    """One retrieval made while the cause was handled: the query and the memories it returned, best first."""

    query: str
    memories: list[tuple[str, int, str]]  # (kind, importance, description)


@dataclass
class Explanation:
    event: LoggedEvent
    chain: list[LoggedEvent] = field(default_factory=list)  # its cause, that one's cause, ... the root last
    calls: list[Call] = field(default_factory=list)
    retrievals: list[Retrieval] = field(default_factory=list)


def _event(conn: psycopg.Connection[Any], event_id: uuid.UUID) -> LoggedEvent | None:
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(_EVENT + " WHERE event_id = %s", (event_id,)).fetchone()
    return LoggedEvent(**row) if row else None


def explain(conn: psycopg.Connection[Any], event_id: uuid.UUID) -> Explanation | None:
    """Everything the log holds about why ``event_id`` happened (None: no such event)."""
    event = _event(conn, event_id)
    if event is None:
        return None
    out = Explanation(event)
    cause_id = event.causation_id
    while cause_id is not None and len(out.chain) < _MAX_CHAIN:
        cause = _event(conn, cause_id)
        if cause is None:
            break
        out.chain.append(cause)
        cause_id = cause.causation_id
    if event.causation_id is not None:
        out.calls = _calls(conn, event.causation_id, event.npc_id)
        out.retrievals = _retrievals(conn, event, event.causation_id)
    return out


def _calls(conn: psycopg.Connection[Any], cause: uuid.UUID, npc_id: str | None) -> list[Call]:
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            "SELECT id, prompt_kind, template_version, provider, model, outcome, tokens_in, tokens_out,"
            " latency_ms, request, response FROM llm_calls WHERE cause_event_id = %s"
            " AND (%s::text IS NULL OR npc_id = %s) ORDER BY id",
            (cause, npc_id, npc_id),
        ).fetchall()
    return [Call(**row) for row in rows]


def _retrievals(conn: psycopg.Connection[Any], event: LoggedEvent, cause: uuid.UUID) -> list[Retrieval]:
    with conn.cursor(row_factory=dict_row) as cur:
        accesses = cur.execute(
            "SELECT payload FROM events WHERE causation_id = %s AND type = 'MemoriesAccessed'"
            " AND tenant_id = %s AND (%s::text IS NULL OR npc_id = %s) ORDER BY seq",
            (cause, event.tenant_id, event.npc_id, event.npc_id),
        ).fetchall()
        ids = [m for a in accesses for m in a["payload"]["memory_ids"]]
        found = {
            str(r["memory_id"]): (r["kind"], r["importance"], r["description"])
            for r in cur.execute(
                "SELECT memory_id, kind, importance, description FROM memories"
                " WHERE memory_id = ANY(%s::uuid[])",
                (ids,),
            ).fetchall()
        } if ids else {}
    gone = ("?", 0, "(no longer in the stream)")
    return [Retrieval(a["payload"].get("query", ""), [found.get(m, gone) for m in a["payload"]["memory_ids"]])
            for a in accesses]


_FILTERS = (
    " AND (%(t)s::text IS NULL OR tenant_id = %(t)s) AND (%(w)s::text IS NULL OR world_id = %(w)s)"
    " AND (%(n)s::text IS NULL OR npc_id = %(n)s)"
    " AND (cardinality(%(types)s::text[]) = 0 OR type = ANY(%(types)s::text[]))"
)


def events_after(
    conn: psycopg.Connection[Any],
    after: int,
    *,
    newest: bool = False,
    tenant_id: str | None = None,
    world_id: str | None = None,
    npc_id: str | None = None,
    types: tuple[str, ...] = (),
    limit: int = 500,
) -> list[LoggedEvent]:
    """Stored events after sequence number ``after`` narrowed by the filters, oldest first: the first
    ``limit`` of them, or with ``newest`` the last ``limit``."""
    order = "DESC" if newest else "ASC"
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            f"{_EVENT} WHERE seq > %(after)s {_FILTERS} ORDER BY seq {order} LIMIT %(limit)s",
            {"after": after, "t": tenant_id, "w": world_id, "n": npc_id, "types": list(types),
             "limit": limit},
        ).fetchall()
    found = [LoggedEvent(**row) for row in rows]
    return found[::-1] if newest else found


def line_of(e: LoggedEvent) -> str:
    """One event on one line: sequence, world time, type, world and NPC, and the gist of its payload."""
    who = f"{e.world_id}/{e.npc_id}" if e.npc_id else e.world_id
    when = f"{e.world_time:%Y-%m-%d %H:%M:%S}"
    return f"{e.seq}  {when}  {e.type}  {who}  {_gist(e.payload, 100)}  {e.event_id}"


def _line(e: LoggedEvent) -> str:
    who = f", npc {e.npc_id}" if e.npc_id else ""
    when = f"{e.world_time:%Y-%m-%d %H:%M:%S}"
    return f"{e.type} {e.event_id} (seq {e.seq}, world {e.world_id}{who}, world time {when})"


def _gist(payload: dict[str, Any], width: int = 160) -> str:
    text = json.dumps({k: v for k, v in payload.items() if v not in (None, [], {}, "")}, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def render(x: Explanation, *, prompts: bool = False) -> str:
    """The explanation as text for a terminal."""
    lines = [_line(x.event), f"  {_gist(x.event.payload)}"]
    if x.chain:
        lines.append("caused by (nearest first):")
        lines += [f"  {_line(c)}\n    {_gist(c.payload, 120)}" for c in x.chain]
        if x.chain[-1].causation_id is None:
            lines.append("  (the last one started the chain)")
    else:
        lines.append("nothing caused it: it started a chain (a request, a clock change, a studio's post)")
    if x.calls:
        lines.append(f"model calls made for it (while {x.chain[0].type} was handled):")
        for c in x.calls:
            lines.append(f"  #{c.id} {c.prompt_kind} v{c.template_version}, {c.provider}/{c.model},"
                         f" {c.outcome}, tokens {c.tokens_in}+{c.tokens_out}, {c.latency_ms:.0f} ms")
            if prompts:
                lines += [f"    {m.get('role', '?')}: {m.get('content', '')}" for m in c.request]
            answer = c.response if isinstance(c.response, dict) else {"value": c.response}
            lines.append(f"    answer: {_gist(answer)}")
    if x.retrievals:
        lines.append("memories retrieved for it:")
        for r in x.retrievals:
            lines.append(f"  query {r.query!r}:")
            lines += [f"    [{kind}, importance {imp}] {text}" for kind, imp, text in r.memories]
    return "\n".join(lines)
