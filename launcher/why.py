"""``npcworld why <event-id>``: why an event happened, from the event log alone.

An event's ``causation_id`` names the event whose handling appended it; following it back reaches the
perception, request or clock tick that started the chain. The model calls and retrievals made while that
handling ran name the same event (``npcworld.cause``: ``llm_calls.cause_event_id``, and the
``MemoriesAccessed`` events' ``retrievals``), so they are found by one index lookup each.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

import psycopg

from npcworld import eventlog
from npcworld.eventlog import Call, Explanation, LoggedEvent, Retrieval, events_after

__all__ = ["Call", "Explanation", "LoggedEvent", "Retrieval", "events_after", "explain", "line_of", "render"]


def explain(conn: psycopg.Connection[Any], event_id: uuid.UUID) -> Explanation | None:
    """Everything the log holds about why ``event_id`` happened (None: no such event)."""
    return eventlog.explain(conn, event_id, _memories)


def _memories(
    conn: psycopg.Connection[Any], _event: LoggedEvent, ids: Sequence[str]
) -> dict[str, tuple[str, int, str]]:
    with conn.cursor() as cur:
        rows = cur.execute(
            "SELECT memory_id, kind, importance, description FROM memories WHERE memory_id = ANY(%s::uuid[])",
            (list(ids),),
        ).fetchall()
    return {str(r[0]): (r[1], r[2], r[3]) for r in rows}


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
                lines += [f"    {m.get('role', '?')}: {m.get('content', '')}" for m in c.request] or [
                    "    (prompt text not known: its inputs were removed or its template version is gone)"]
            answer = c.response if isinstance(c.response, dict) else {"value": c.response}
            lines.append(f"    answer: {_gist(answer)}")
    if x.retrievals:
        lines.append("memories retrieved for it:")
        for r in x.retrievals:
            lines.append(f"  query {r.query!r}:" if r.query else "  query (the player's line):")
            lines += [f"    [{kind}, importance {imp}] {text}" for kind, imp, text in r.memories]
    return "\n".join(lines)
