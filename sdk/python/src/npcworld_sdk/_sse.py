"""Server-Sent Events: an incremental parser of ``text/event-stream`` lines, and the event it yields."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["ChatChunk", "SSEParser", "StreamEvent"]


@dataclass(frozen=True)
class StreamEvent:
    """One event of a world's stream: ``seq`` (also its SSE id), ``type`` and the stored ``envelope``."""

    seq: int
    type: str
    envelope: dict[str, Any]

    @property
    def event_id(self) -> str:
        return str(self.envelope.get("event_id", ""))

    @property
    def npc_id(self) -> str | None:
        value = self.envelope.get("npc_id")
        return None if value is None else str(value)

    @property
    def payload(self) -> dict[str, Any]:
        payload = self.envelope.get("payload")
        return payload if isinstance(payload, dict) else {}


@dataclass(frozen=True)
class ChatChunk:
    """A piece of a chat's reply as the NPC produces it (``index`` from 1; also its SSE id). A preview: the
    ``ReplyOut`` that ends ``stream_chat`` is the reply as validated and stored."""

    index: int
    text: str


class SSEParser:
    """Feed it lines (without line endings); it returns a ``StreamEvent`` at the blank line ending one.

    Comments (``: keepalive``) and events without data are skipped; ``last_id`` is the last ``id:`` seen.
    """

    def __init__(self) -> None:
        self.last_id: str | None = None
        self._event = ""
        self._data: list[str] = []
        self._id: str | None = None

    def feed(self, line: str) -> StreamEvent | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        return None

    def _dispatch(self) -> StreamEvent | None:
        data, event, ident = "\n".join(self._data), self._event, self._id
        self._data, self._event, self._id = [], "", None
        if ident is not None:
            self.last_id = ident
        if not data:
            return None
        envelope = json.loads(data)
        seq = int(ident) if ident is not None and ident.isdigit() else 0
        return StreamEvent(seq=seq, type=event or str(envelope.get("type", "message")), envelope=envelope)
