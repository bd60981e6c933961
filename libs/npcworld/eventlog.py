"""Reading the event log for operators: why an event happened, and events narrowed by filters.

An event's ``causation_id`` names the event whose handling appended it; following it back reaches the
perception, request or clock tick that started the chain. The model calls and retrievals made while that
handling ran name the same event (``npcworld.cause``: ``llm_calls.cause_event_id``, and the
``MemoriesAccessed`` events' ``retrievals``), so they are found by one index lookup each.

Shared by ``npcworld why`` / ``npcworld events tail`` and the gateway's console. Only tables of the shared
core are read here; what a retrieved memory says comes from the caller's ``describe`` (the terminal reads
the memory stream, the console the ``MemoryRecorded`` events of the log).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from npcworld.eventstore.history import read_in_parts_sync
from npcworld.llm.prompts import render_recorded
from npcworld.shredding import reveal_sync

__all__ = [
    "Call", "Describe", "Explanation", "LoggedEvent", "Retrieval", "event", "events_after", "explain",
    "logged", "memories_from_log",
]

_MAX_CHAIN = 50
EVENT_COLUMNS = ("seq, event_id, type, tenant_id, world_id, npc_id, world_time, causation_id, correlation_id,"
                 " payload")
_EVENT = f"SELECT {EVENT_COLUMNS} FROM events"


# An inherited event of a fork, found from the id it has there (migration 0132: one probe per fork of the
# tenant), as the fork sees it.
_INHERITED_EVENT = """
SELECT e.seq, fork_event_id(l.tenant_id, l.world_id, e.event_id) AS event_id, e.type, e.tenant_id,
       l.world_id, e.npc_id, e.world_time, e.event_id AS causation_id, e.correlation_id, e.payload
  FROM world_lineage l JOIN events e ON e.event_id = fork_event_id(l.tenant_id, l.world_id, %(id)s)
   AND in_world(e.tenant_id, e.world_id, l.tenant_id, l.ancestor) AND e.seq <= l.until_seq
   AND e.world_time <= l.until_time AND e.type <> 'WorldDeleted'
 WHERE %(t)s::text IS NULL OR l.tenant_id = %(t)s
 LIMIT 1
"""


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
    parameters: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] | None = None  # the template's inputs; None for calls recorded before 0106
    world_id: str = ""
    npc_id: str | None = None


@dataclass(frozen=True)
class Retrieval:
    """One retrieval made while the cause was handled: the query and the memories it returned, best first."""

    query: str
    memories: list[tuple[str, int, str]]  # (kind, importance, description)
    memory_ids: list[str] = field(default_factory=list)
    accessed_at: str | None = None


@dataclass
class Explanation:
    event: LoggedEvent
    chain: list[LoggedEvent] = field(default_factory=list)  # its cause, that one's cause, ... the root last
    calls: list[Call] = field(default_factory=list)
    retrievals: list[Retrieval] = field(default_factory=list)


# Memory ids of one NPC's retrievals → (kind, importance, description) of those still known.
Describe = Callable[[psycopg.Connection[Any], LoggedEvent, Sequence[str]], dict[str, tuple[str, int, str]]]


def event(
    conn: psycopg.Connection[Any], event_id: uuid.UUID, tenant_id: str | None = None
) -> LoggedEvent | None:
    """One stored event (with ``tenant_id``: only if it is that tenant's)."""
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(_EVENT + " WHERE event_id = %s AND (%s::text IS NULL OR tenant_id = %s)",
                          (event_id, tenant_id, tenant_id)).fetchone()
        if row is None:  # an event a fork inherits, by the id it has there
            row = cur.execute(_INHERITED_EVENT, {"id": event_id, "t": tenant_id}).fetchone()
    return logged(conn, [row])[0] if row else None


def logged(conn: psycopg.Connection[Any], rows: Sequence[dict[str, Any]]) -> list[LoggedEvent]:
    """Stored rows as events, with what players said opened while their keys exist (npcworld.shredding)."""
    reveal_sync(conn, [(row["type"], row["payload"]) for row in rows])
    return [LoggedEvent(**row) for row in rows]


def explain(
    conn: psycopg.Connection[Any], event_id: uuid.UUID, describe: Describe, tenant_id: str | None = None
) -> Explanation | None:
    """Everything the log holds about why ``event_id`` happened (None: no such event, or with
    ``tenant_id`` one of another tenant). A chain never leaves the event's tenant."""
    found = event(conn, event_id, tenant_id)
    if found is None:
        return None
    out = Explanation(found)
    cause_id = found.causation_id
    while cause_id is not None and len(out.chain) < _MAX_CHAIN:
        cause = event(conn, cause_id, found.tenant_id)
        if cause is None:
            break
        out.chain.append(cause)
        cause_id = cause.causation_id
    if found.causation_id is not None:
        out.calls = _calls(conn, found.causation_id, found.tenant_id, found.npc_id)
        out.retrievals = _retrievals(conn, found, found.causation_id, describe)
    return out


def _calls(conn: psycopg.Connection[Any], cause: uuid.UUID, tenant_id: str, npc_id: str | None) -> list[Call]:
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            "SELECT id, prompt_kind, template_version, provider, model, outcome, tokens_in, tokens_out,"
            " latency_ms, request, response, parameters, inputs, world_id, npc_id"
            " FROM llm_calls WHERE cause_event_id = %s AND tenant_id = %s"
            " AND (%s::text IS NULL OR npc_id = %s) ORDER BY id",
            (cause, tenant_id, npc_id, npc_id),
        ).fetchall()
    return [Call(**(row | {"request": _prompt(row)})) for row in rows]


def _prompt(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The call's messages: as recorded, else rendered again from its template inputs; [] when neither is
    known (inputs forgotten with a player, or a template version no longer in the code)."""
    if row["request"] is not None:
        return list(row["request"])
    return list(render_recorded(row["prompt_kind"], row["template_version"], row["inputs"]) or [])


def _retrievals(
    conn: psycopg.Connection[Any], found: LoggedEvent, cause: uuid.UUID, describe: Describe
) -> list[Retrieval]:
    """The retrievals made while ``cause`` was handled: in the NPC's batched MemoriesAccessed events (their
    ``retrievals`` name each handling), or, in older logs, one event per retrieval caused by it."""
    with conn.cursor(row_factory=dict_row) as cur:
        accesses = cur.execute(
            "SELECT payload FROM events WHERE type = 'MemoriesAccessed' AND tenant_id = %s"
            " AND (%s::text IS NULL OR npc_id = %s)"
            " AND (causation_id = %s OR access_causes(payload) @> ARRAY[%s]::uuid[]) ORDER BY seq",
            (found.tenant_id, found.npc_id, found.npc_id, cause, cause),
        ).fetchall()
    reveal_sync(conn, [("MemoriesAccessed", a["payload"]) for a in accesses])
    made: list[tuple[str, list[str], Any]] = []
    for a in accesses:
        p = a["payload"]
        mine = [r for r in p.get("retrievals") or () if r.get("cause") == str(cause)]
        if mine:
            made += [(r.get("query") or "", list(r["memory_ids"]), p.get("accessed_at")) for r in mine]
        elif not p.get("retrievals"):
            made.append((p.get("query") or "", list(p["memory_ids"]), p.get("accessed_at")))
    ids = [m for _, memory_ids, _ in made for m in memory_ids]
    known = describe(conn, found, ids) if ids else {}
    gone = ("?", 0, "(no longer in the stream)")
    return [Retrieval(query, [known.get(m, gone) for m in memory_ids], memory_ids, at)
            for query, memory_ids, at in made]


def memories_from_log(
    conn: psycopg.Connection[Any], found: LoggedEvent, ids: Sequence[str]
) -> dict[str, tuple[str, int, str]]:
    """A ``Describe`` reading the ``MemoryRecorded`` events of the event's world (its tenant's only)."""
    with conn.cursor() as cur:
        rows = cur.execute(
            "SELECT payload->>'memory_id', payload->>'kind', (payload->>'importance')::int,"
            " payload->>'description' FROM world_events(%s, %s) AS events"
            " WHERE type = 'MemoryRecorded' AND (%s::text IS NULL OR npc_id = %s)"
            " AND payload->>'memory_id' = ANY(%s::text[])",
            (found.tenant_id, found.world_id, found.npc_id, found.npc_id, list(ids)),
        ).fetchall()
    described = [{"description": r[3]} for r in rows]
    reveal_sync(conn, [("MemoryRecorded", d) for d in described])
    return {r[0]: (r[1], r[2], d["description"]) for r, d in zip(rows, described, strict=True)}


_FILTERS = (
    " AND (%(n)s::text IS NULL OR npc_id = %(n)s)"
    " AND (cardinality(%(types)s::text[]) = 0 OR type = ANY(%(types)s::text[]))"
)
# A tenant's events, or an id's across tenants, by scan (one world's: by its parts, each by its index).
_SOME_WORLDS = " AND (%(t)s::text IS NULL OR tenant_id = %(t)s) AND (%(w)s::text IS NULL OR world_id = %(w)s)"


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
    params = {"after": after, "t": tenant_id, "w": world_id, "n": npc_id, "types": list(types)}

    def read(source: str, part: dict[str, Any], n: int) -> list[dict[str, Any]]:
        with conn.cursor(row_factory=dict_row) as cur:
            return cur.execute(f"SELECT {EVENT_COLUMNS} FROM {source} AND seq > %(after)s{_FILTERS}"
                               f" ORDER BY seq {order} LIMIT %(limit)s",
                               {**params, **part, "limit": n}).fetchall()

    if tenant_id and world_id:  # a fork's inherited history first (npcworld.eventstore.history)
        rows = read_in_parts_sync(conn, tenant_id, world_id, lambda p, n: read(*p.named_source(), n), limit,
                                  newest_first=newest)
    else:
        rows = read(f"events WHERE true{_SOME_WORLDS}", {}, limit)
    found = logged(conn, rows)
    return found[::-1] if newest else found
