"""What the console pages read, always within one tenant: the event log and the shared core's records
(model calls, budgets, heartbeats, the outbox, dead letters). Synchronous; the pages run them in a thread.

Nothing here reads another service's tables: positions, plans, memories, relationships and conversations
are all in the log (``NpcsMoved``, ``ActionStarted``, ``DayPlanned``, ``MemoryRecorded``, ...).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import psycopg
from psycopg.rows import dict_row

from npcworld.contracts.memory import legacy_provenance
from npcworld.eventlog import EVENT_COLUMNS, LoggedEvent, events_after, logged
from npcworld.eventstore.history import Part, newest_sql, read_in_parts_sync
from npcworld.eventstore.store import STREAM_IS
from npcworld.fork import world_stream
from npcworld.messaging.heartbeat import owed_sql
from npcworld.outbox.relay import _OLDEST_AGE
from npcworld.shredding import FORGOTTEN
from services.gateway.console.replay import Change, NpcFrame, Place, changes_of, places_of, state_at

__all__ = ["MemoryRow", "NpcPage", "OpsPage", "World", "WorldTimeline", "dead_letters_of", "npc_page",
           "ops_page", "recent_events", "timeline", "world"]

_POSITION_TYPES = ["NpcsMoved", "ActionStarted"]
LAG_WINDOW = 10_000  # consumer lag is counted over the newest events of the log
MAX_CHANGES = 5_000  # position and action events a world page replays at most
_MOVES_BACK = 2_000  # move events read back for the state a window opens with


@dataclass
class World:
    world_id: str
    name: str = ""
    template: str | None = None
    deleted: bool = False
    exists: bool = False
    sectors: list[dict[str, Any]] = field(default_factory=list)
    tile_map: dict[str, Any] | None = None
    npcs: dict[str, dict[str, Any]] = field(default_factory=dict)  # id → NpcCreated payload
    created: list[LoggedEvent] = field(default_factory=list)  # NpcCreated events
    forked: dict[str, Any] | None = None  # the WorldForked payload of a fork (source world, fork point)

    @property
    def places(self) -> list[Place]:
        return places_of(self.world_id, self.sectors)

    @property
    def names(self) -> dict[str, str]:
        return {n: str(p.get("name", n)) for n, p in self.npcs.items()}


def _rows(conn: psycopg.Connection[Any], query: str, params: Any) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(query, params).fetchall()


def world(conn: psycopg.Connection[Any], tenant_id: str, world_id: str) -> World:
    """The tenant's world as its world stream tells it (``exists`` False: none of this tenant's)."""
    out = World(world_id)
    stream = world_stream(world_id)
    rows = _rows(conn, f"SELECT version, {EVENT_COLUMNS} FROM events WHERE {STREAM_IS}"
                 f" UNION ALL SELECT version, {EVENT_COLUMNS} FROM inherited_stream(%s, %s, %s)"
                 " ORDER BY version", (tenant_id, stream, tenant_id, world_id, stream))
    for row in rows:
        del row["version"]
    for e in logged(conn, rows):
        p = e.payload
        if e.type == "WorldCreated":
            out.exists, out.name, out.template = True, str(p.get("name", "")), p.get("template")
        elif e.type == "WorldDeleted":
            out.deleted = True
        elif e.type == "WorldForked":
            out.forked = p
        elif e.type == "WorldDefined":
            out.sectors, out.tile_map = list(p.get("sectors", [])), p.get("tile_map")
        elif e.type == "NpcCreated":
            out.npcs[str(p["npc_id"])] = p
            out.created.append(e)
    return out


def worlds(
    conn: psycopg.Connection[Any], tenant_id: str, only: frozenset[str] | None
) -> list[dict[str, Any]]:
    """The tenant's live worlds with their NPC counts and latest world time (world ids found by one probe
    each of the (tenant, type, world) index, a fork's from what it inherits too)."""
    return _rows(
        conn,
        "WITH RECURSIVE ids AS ("
        " SELECT (SELECT min(world_id) FROM events WHERE tenant_id = %(t)s"
        " AND type IN ('WorldCreated', 'WorldForked')) AS id"
        " UNION ALL SELECT (SELECT min(world_id) FROM events WHERE tenant_id = %(t)s"
        " AND type IN ('WorldCreated', 'WorldForked') AND world_id > ids.id)"
        " FROM ids WHERE ids.id IS NOT NULL)"
        " SELECT ids.id AS world_id, c.payload->>'name' AS name, c.payload->>'template' AS template,"
        " (SELECT count(*) FROM world_events(%(t)s, ids.id) n WHERE n.type = 'NpcCreated') AS npcs,"
        " (SELECT f.payload->>'source_world_id' FROM events f"
        " WHERE in_world(f.tenant_id, f.world_id, %(t)s, ids.id) AND f.type = 'WorldForked'"
        " ORDER BY f.seq DESC LIMIT 1) AS fork_of,"
        " (SELECT max(world_time) FROM events t"
        " WHERE in_world(t.tenant_id, t.world_id, %(t)s, ids.id)) AS now,"
        " (SELECT min(seq) FROM events s WHERE in_world(s.tenant_id, s.world_id, %(t)s, ids.id)) AS made"
        " FROM ids CROSS JOIN LATERAL (SELECT payload FROM world_events(%(t)s, ids.id) w"
        " WHERE w.type = 'WorldCreated' LIMIT 1) c"
        " WHERE ids.id IS NOT NULL"
        " AND (%(only)s::text[] IS NULL OR ids.id = ANY(%(only)s::text[]))"
        " AND NOT EXISTS (SELECT 1 FROM events d WHERE in_world(d.tenant_id, d.world_id, %(t)s, ids.id)"
        " AND d.type = 'WorldDeleted')"
        " ORDER BY made DESC LIMIT 200",
        {"t": tenant_id, "only": sorted(only) if only is not None else None},
    )


@dataclass
class WorldTimeline:
    first: datetime | None
    last: datetime | None
    since: datetime | None
    start: dict[str, NpcFrame]
    changes: list[Change]
    last_seq: int


def timeline(
    conn: psycopg.Connection[Any], tenant_id: str, w: World, span: timedelta, until: datetime | None = None,
    max_changes: int = MAX_CHANGES,
) -> WorldTimeline:
    """Positions and actions over the world-time window ``(until - span, until]`` (``until``: the world's
    latest time; the window shrinks to the newest ``max_changes`` events), with each NPC's state as the
    window opens."""
    # No max(seq) of the world here: with a newer world (a fork) in the table, Postgres walks the primary key
    # back through all of that one's events to find it (0.4 s on a 1M-event fork) instead of using the
    # world's index. The page's live stream resumes after the window's newest change (it follows changes).
    bounds = _rows(conn, _BOUNDS, {"t": tenant_id, "w": w.world_id})[0]
    first, last = bounds["first"], bounds["last"]
    if last is None:
        return WorldTimeline(None, None, None, {}, [], 0)
    end = min(until, last) if until else last
    since = max(first, end - span)
    # The changes are taken apart in SQL (what ``changes_of`` does): decoding whole payloads would take
    # most of the page's time.
    with conn.cursor() as cur:
        rows = cur.execute(_WINDOW, {"t": tenant_id, "w": w.world_id, "since": since, "end": end,
                                     "n": max_changes + 1}).fetchall()
    if len(rows) > max_changes:  # the window opens at the oldest step it holds whole
        since = rows[-1][1]
        rows = [r for r in rows if r[1] > since]
    window = [Change(seq, at, npc, path, (int(x), int(y)) if x is not None and y is not None else None,
                     description, emoji)
              for seq, at, npc, path, x, y, description, emoji in sorted(rows, key=lambda r: r[0])]
    following = window[-1].seq if window else _newest_seq_at(conn, tenant_id, w.world_id, last)
    return WorldTimeline(first, last, since, _opening(conn, tenant_id, w, since), window, following)


# The world's first and latest world times: each part's ends, by its world-time index (min and max over
# world_events would read the whole history).
_BOUNDS = """
SELECT min(f) AS first, max(l) AS last FROM (
  SELECT min(world_time) AS f, max(world_time) AS l FROM events
   WHERE in_world(tenant_id, world_id, %(t)s, %(w)s)
  UNION ALL
  SELECT i.f, i.l FROM world_lineage p CROSS JOIN LATERAL (
    SELECT min(world_time) AS f, max(world_time) AS l
      FROM inherited_part(%(t)s, %(w)s, p.ancestor, p.until_seq, p.until_time)) AS i
   WHERE p.tenant_id = %(t)s AND p.world_id = %(w)s) AS ends
"""


def _newest_seq_at(conn: psycopg.Connection[Any], tenant_id: str, world_id: str, at: datetime) -> int:
    """The newest event's seq among the world's events at world time ``at`` (by the world-time index)."""
    row = _rows(conn, "SELECT coalesce(max(seq), 0) AS seq FROM world_events(%s, %s) AS events"
                " WHERE world_time = %s", (tenant_id, world_id, at))[0]
    return int(row["seq"])


_WINDOW = f"""
SELECT seq, world_time, npc, path, x, y, description, emoji FROM (
  SELECT e.seq, e.world_time, m->>'npc_id' AS npc, m->>'path' AS path, (m->'tile'->>0)::int AS x,
         (m->'tile'->>1)::int AS y, NULL AS description, NULL AS emoji
    FROM {newest_sql("seq, world_time, payload",
                     "type = 'NpcsMoved' AND world_time > %(since)s AND world_time <= %(end)s", "%(n)s")} e,
         jsonb_array_elements(e.payload->'moves') m
  UNION ALL
  SELECT seq, world_time, npc_id, payload->>'arrived_at', NULL, NULL, payload->>'description',
         coalesce(payload->>'emoji', '')
    FROM {newest_sql("seq, world_time, npc_id, payload",
                     "type = 'ActionStarted' AND npc_id IS NOT NULL AND world_time > %(since)s"
                     " AND world_time <= %(end)s", "%(n)s")} a
) c ORDER BY seq DESC LIMIT %(n)s
"""


def _opening(conn: psycopg.Connection[Any], tenant_id: str, w: World, at: datetime) -> dict[str, NpcFrame]:
    """Each NPC's state at ``at``: its latest action and own placement (one index walk per NPC), then the
    clock's moves among the world's last ``_MOVES_BACK`` move events."""
    with conn.cursor() as cur:
        rows = cur.execute(_OPENING, {"npcs": sorted(w.npcs), "types": _POSITION_TYPES, "t": tenant_id,
                                      "w": w.world_id, "at": at, "back": _MOVES_BACK}).fetchall()
    found = [Change(seq, when, npc, path, (int(x), int(y)) if x is not None and y is not None else None,
                    description, emoji)
             for seq, when, npc, path, x, y, description, emoji in sorted(rows, key=lambda r: r[0])]
    return state_at(w.names, [*changes_of(w.created), *found])


# The changes of the events that set each NPC's state at a time, taken apart in SQL like _WINDOW's.
_OPENING = f"""
WITH own AS (
  SELECT e.* FROM unnest(%(npcs)s::text[]) AS n(id), unnest(%(types)s::text[]) AS k(type)
  CROSS JOIN LATERAL {newest_sql("seq, world_time, type, npc_id, payload",
                                 "npc_id = n.id AND type = k.type AND world_time <= %(at)s", "1")} e
), steps AS (
  SELECT * FROM {newest_sql("seq, world_time, type, npc_id, payload",
                            "type = 'NpcsMoved' AND world_time <= %(at)s", "%(back)s")} s
   WHERE npc_id IS NULL
), moved AS (SELECT * FROM own WHERE type = 'NpcsMoved' UNION ALL SELECT * FROM steps)
SELECT e.seq, e.world_time, m->>'npc_id', m->>'path', (m->'tile'->>0)::int, (m->'tile'->>1)::int, NULL, NULL
  FROM moved e, jsonb_array_elements(e.payload->'moves') m
UNION ALL
SELECT seq, world_time, npc_id, payload->>'arrived_at', NULL, NULL, payload->>'description',
       coalesce(payload->>'emoji', '')
  FROM own WHERE type = 'ActionStarted'
"""


@dataclass(frozen=True)
class MemoryRow:
    memory_id: str
    kind: str
    description: str
    importance: int
    created_at: str
    last_access: str
    recency: float  # 0.995 per world hour since the last access, as retrieval scores it (before scaling)
    evidence: tuple[str, ...]
    depth: int
    event_id: uuid.UUID
    provenance: str = "perceived, high"  # source (and who told it), trust: docs/studio-controls.md


def _provenance(p: dict[str, Any]) -> str:
    """Where the memory came from and how far the NPC relies on it ("told by player:p1, low")."""
    known = p if "source" in p else legacy_provenance(str(p["kind"]), p.get("subject"))
    by = f" by {known['told_by']}" if known.get("told_by") else ""
    return f"{known['source']}{by}, {known['trust']}"


@dataclass
class NpcPage:
    persona: dict[str, Any]
    action: LoggedEvent | None = None
    plan: LoggedEvent | None = None
    revisions: list[LoggedEvent] = field(default_factory=list)
    memories: list[MemoryRow] = field(default_factory=list)
    relationships: list[LoggedEvent] = field(default_factory=list)
    conversations: dict[str, list[LoggedEvent]] = field(default_factory=dict)
    decisions: list[LoggedEvent] = field(default_factory=list)
    now: datetime | None = None


def _npc_events(conn: psycopg.Connection[Any], tenant_id: str, world_id: str, npc_id: str,
                types: list[str], limit: int) -> list[LoggedEvent]:
    def newest(part: Part, n: int) -> list[dict[str, Any]]:
        source, params = part.source()
        return _rows(conn, f"SELECT {EVENT_COLUMNS} FROM {source} AND npc_id = %s AND type = ANY(%s)"
                     " ORDER BY seq DESC LIMIT %s", (*params, npc_id, types, n))

    return logged(conn, read_in_parts_sync(conn, tenant_id, world_id, newest, limit, newest_first=True))


def _relationships(conn: psycopg.Connection[Any], ws: tuple[str, str, str]) -> list[LoggedEvent]:
    """The latest RelationshipChanged per other, warmest first (none with a forgotten player)."""
    latest: dict[str, LoggedEvent] = {}
    for e in _npc_events(conn, *ws, ["RelationshipChanged"], 500)[::-1]:
        latest[str(e.payload.get("other_id"))] = e
    kept = [e for e in latest.values() if e.payload.get("summary") != FORGOTTEN]
    return sorted(kept, key=lambda e: -float(e.payload.get("sentiment", 0)))


def npc_page(
    conn: psycopg.Connection[Any], tenant_id: str, w: World, npc_id: str, memories: int = 300
) -> NpcPage:
    """An NPC's persona, current action, day plan, memory stream, relationships and conversations."""
    page = NpcPage(persona=w.npcs[npc_id])
    ws = (tenant_id, w.world_id, npc_id)
    actions = _npc_events(conn, *ws, ["ActionStarted"], 1)
    page.action = actions[0] if actions else None
    page.decisions = _npc_events(conn, *ws, ["ActionDecided", "PlanRevised", "ConversationRequested"], 20)
    plans = _npc_events(conn, *ws, ["DayPlanned"], 1)
    page.plan = plans[0] if plans else None
    if page.plan is not None:
        revised = _npc_events(conn, *ws, ["PlanRevised"], 20)
        page.revisions = [e for e in revised if e.seq > page.plan.seq][::-1]
    recorded = _npc_events(conn, *ws, ["MemoryRecorded"], memories)
    accessed: dict[str, str] = {}
    for e in _npc_events(conn, *ws, ["MemoriesAccessed"], 2000)[::-1]:
        for m in e.payload.get("memory_ids", ()):
            accessed[m] = str(e.payload.get("accessed_at"))
    now = _rows(conn, "SELECT max(world_time) AS t FROM events WHERE in_world(tenant_id, world_id, %s, %s)",
                (tenant_id, w.world_id))[0]["t"]
    page.now = now
    for e in recorded:
        p = e.payload
        if p["description"] == FORGOTTEN:  # a forgotten player's chat: gone from the stream too
            continue
        last = accessed.get(p["memory_id"], p["created_at"])
        hours = max(0.0, (now - datetime.fromisoformat(last)).total_seconds() / 3600) if now else 0.0
        page.memories.append(MemoryRow(
            p["memory_id"], p["kind"], p["description"], int(p["importance"]), p["created_at"], last,
            round(0.995 ** hours, 4), tuple(p.get("evidence", ())), int(p.get("depth", 0)), e.event_id,
            _provenance(p)))
    page.relationships = _relationships(conn, ws)
    spoken = _npc_events(conn, *ws, ["UtteranceSpoken"], 200)
    ended = _npc_events(conn, *ws, ["ConversationEnded"], 50)
    ids = {str(e.payload["conversation_id"]) for e in [*spoken, *ended]}
    # Every line of those conversations was spoken by the NPC or by someone it talked with.
    who = {npc_id, *(str(e.payload.get("listener_id")) for e in spoken)}
    who |= {str(p) for e in ended for p in e.payload.get("participants", ())}
    if ids:
        rows = _rows(conn, f"SELECT {EVENT_COLUMNS} FROM world_events(%s, %s) AS events"
                     " WHERE npc_id = ANY(%s) AND type = 'UtteranceSpoken'"
                     " AND payload->>'conversation_id' = ANY(%s) ORDER BY seq",
                     (tenant_id, w.world_id, sorted(who), sorted(ids)))
        for e in logged(conn, rows):
            page.conversations.setdefault(str(e.payload["conversation_id"]), []).append(e)
    return page


def recent_events(
    conn: psycopg.Connection[Any], tenant_id: str, *, world_id: str | None = None, npc_id: str | None = None,
    types: tuple[str, ...] = (), after: int = 0, limit: int = 100,
) -> list[LoggedEvent]:
    """The newest matching events of the tenant (after ``after``), oldest first."""
    return events_after(conn, after, newest=True, tenant_id=tenant_id, world_id=world_id, npc_id=npc_id,
                        types=types, limit=limit)


@dataclass
class OpsPage:
    heartbeats: list[dict[str, Any]]
    lag: dict[str, int]
    outbox: dict[str, Any]
    generation: dict[str, Any] | None
    budgets: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    dead: list[dict[str, Any]]


def dead_letters_of(conn: psycopg.Connection[Any], tenant_id: str, limit: int = 100) -> list[dict[str, Any]]:
    """Dead letters of the tenant's events, newest first (a message that was no event names no tenant and
    is listed by ``npcworld dlq list`` only)."""
    return _rows(
        conn,
        "SELECT d.id, d.consumer, d.event_id, d.event_type, d.topic, d.reason, d.created_at, e.world_id,"
        " e.npc_id FROM dead_letters d JOIN events e ON e.event_id = d.event_id WHERE e.tenant_id = %s"
        " ORDER BY d.id DESC LIMIT %s",
        (tenant_id, limit),
    )


def ops_page(conn: psycopg.Connection[Any], tenant_id: str) -> OpsPage:
    """Processes' heartbeats and lag, the outbox, broker generation (the deployment's), and the tenant's
    model budgets, model-call outcomes of the last hour and dead letters."""
    heartbeats = _rows(conn, "SELECT consumer, instance, generation, parked, started_at, seen_at,"
                       " llm_breakers, extract(epoch FROM now() - seen_at)::float8 AS age"
                       " FROM consumer_heartbeats ORDER BY consumer, instance", ())
    top = _rows(conn, "SELECT coalesce(max(seq), 0) AS seq FROM events", ())[0]["seq"]
    lag = {r["consumer"]: int(r["n"]) for r in _rows(
        conn, f"WITH {owed_sql()} SELECT consumer, count(*) AS n FROM owed GROUP BY consumer",
        {"since": max(0, top - LAG_WINDOW), "until": top, "alive": 3600})}
    outbox = _rows(conn, "SELECT count(*) AS pending FROM outbox", ())[0]
    outbox["age"] = float(_rows(conn, _OLDEST_AGE, ())[0]["coalesce"])
    generations = _rows(conn, "SELECT generation, checkpoint_seq, created_at, ready_at"
                        " FROM broker_generations ORDER BY generation DESC LIMIT 1", ())
    budgets = _rows(conn, "SELECT world_id, limit_tokens, used_tokens, fallback_since FROM llm_budgets"
                    " WHERE tenant_id = %s ORDER BY world_id", (tenant_id,))
    calls = _rows(conn, "SELECT provider, outcome, count(*) AS n,"
                  " round(avg(latency_ms)::numeric, 1) AS latency FROM llm_calls WHERE tenant_id = %s"
                  " AND created_at > now() - interval '1 hour'"
                  " GROUP BY provider, outcome ORDER BY provider, outcome", (tenant_id,))
    return OpsPage(heartbeats, lag, outbox, generations[0] if generations else None, budgets, calls,
                   dead_letters_of(conn, tenant_id))
