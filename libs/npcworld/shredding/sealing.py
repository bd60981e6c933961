"""Sealing player-originated fields as the event store appends, and opening them as it is read.

Appending seals each field ``fields.SEALED_FIELDS`` names with its owner's key (in the appending transaction;
a first chat creates the key). Readers of stored payloads open them in place: with the key the text comes
back, without it (the player was forgotten) the field reads ``FORGOTTEN``. Services therefore see the
words while the player is known and never after, whichever way they read the log.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, MutableMapping, Sequence
from typing import Any

from psycopg import AsyncConnection, Connection

from npcworld.contracts import Envelope
from npcworld.shredding.cipher import FORGOTTEN, DataKey, open_text, seal_text, token_key_id
from npcworld.shredding.fields import CAUSED_BY_PLAYER, SEALED_FIELDS, owner_of
from npcworld.shredding.keys import keys_by_id, keys_by_id_sync, keys_for

__all__ = ["reveal", "reveal_sync", "seal_payloads"]

Payload = MutableMapping[str, Any]
_CAUSING_PLAYERS = ("SELECT event_id, payload->>'player_id' FROM events"
                    " WHERE event_id = ANY(%s) AND type = 'PlayerSpoke'")
# A fork's copy is caused by the event it copies: follow the copies back to the original and its cause.
_ORIGINAL_PLAYERS = """
WITH RECURSIVE chain(start, forked, cause) AS (
  SELECT event_id, forked_from, causation_id FROM events WHERE event_id = ANY(%s)
  UNION ALL
  SELECT c.start, o.forked_from, o.causation_id FROM chain c JOIN events o ON o.event_id = c.forked
)
SELECT c.start, s.payload->>'player_id' FROM chain c JOIN events s ON s.event_id = c.cause
WHERE c.forked IS NULL AND s.type = 'PlayerSpoke'
"""


async def _players_by(conn: AsyncConnection[Any], sql: str, ids: list[uuid.UUID]) -> dict[Any, str]:
    if not ids:
        return {}
    cur = await conn.execute(sql, (ids,))
    return {row[0]: row[1] for row in await cur.fetchall()}


async def _owners(conn: AsyncConnection[Any], events: Sequence[Envelope], dumped: list[Payload | None]
                  ) -> list[str | None]:
    owners = [owner_of(e.type, d) if d is not None else None for e, d in zip(events, dumped, strict=True)]
    caused = [e for e in events if e.type in CAUSED_BY_PLAYER]
    if not caused:
        return owners
    direct = await _players_by(conn, _CAUSING_PLAYERS, [
        e.causation_id for e in caused if e.forked_from is None and e.causation_id is not None])
    copied = await _players_by(conn, _ORIGINAL_PLAYERS, [e.forked_from for e in caused if e.forked_from])
    return [o if e.type not in CAUSED_BY_PLAYER
            else copied.get(e.forked_from) if e.forked_from else direct.get(e.causation_id)
            for e, o in zip(events, owners, strict=True)]


def _seal(payload: Payload, fields: tuple[str, ...], key: DataKey | None) -> str:
    for name in fields:
        value = payload.get(name)
        if isinstance(value, str) and value:
            payload[name] = seal_text(key, value) if key else FORGOTTEN
    return json.dumps(payload, separators=(",", ":"))


async def seal_payloads(conn: AsyncConnection[Any], events: Sequence[Envelope]) -> list[str]:
    """Each event's payload as stored JSON, with its player's words sealed (``FORGOTTEN`` for a forgotten
    player, whose words are not stored again). The events are all of one tenant (one append)."""
    dumped: list[Payload | None] = [
        e.payload.stored() if e.type in SEALED_FIELDS else None for e in events
    ]
    owners = await _owners(conn, events, dumped) if any(d is not None for d in dumped) else []
    players = {o for o in owners if o is not None}
    keys = await keys_for(conn, events[0].tenant_id, players) if players else {}
    out = []
    for i, event in enumerate(events):
        payload, owner = dumped[i], owners[i] if owners else None
        if payload is None or owner is None:
            out.append(event.payload.stored_json())
        else:
            out.append(_seal(payload, SEALED_FIELDS[event.type], keys.get(owner)))
    return out


def _key_ids(items: Sequence[tuple[str, Payload]]) -> set[uuid.UUID]:
    return {k for event_type, payload in items for name in SEALED_FIELDS.get(event_type, ())
            if (k := token_key_id(payload.get(name))) is not None}


def _open(items: Sequence[tuple[str, Payload]], keys: dict[uuid.UUID, DataKey]) -> None:
    for event_type, payload in items:
        for name in SEALED_FIELDS.get(event_type, ()):
            if (key_id := token_key_id(payload.get(name))) is not None:
                payload[name] = open_text(keys.get(key_id), payload[name])


async def reveal(conn: AsyncConnection[Any], items: Iterable[tuple[str, Payload]]) -> None:
    """Open the sealed fields of stored payloads in place: (event type, payload) pairs."""
    listed = [(t, p) for t, p in items if t in SEALED_FIELDS]
    if listed:
        _open(listed, await keys_by_id(conn, _key_ids(listed)))


def reveal_sync(conn: Connection[Any], items: Iterable[tuple[str, Payload]]) -> None:
    """``reveal`` on a blocking connection."""
    listed = [(t, p) for t, p in items if t in SEALED_FIELDS]
    if listed:
        _open(listed, keys_by_id_sync(conn, _key_ids(listed)))
