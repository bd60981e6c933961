"""``HttpMemoryReader``: the MemoryReader port over the memory service's internal HTTP API."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import httpx
from pydantic import TypeAdapter

from npcworld.cause import CAUSE_HEADER, current_cause
from npcworld.contracts import MemoryKind
from npcworld.errors import NotFoundError, PermanentError, TransientError, ValidationError
from npcworld.lanes import LANE_HEADER, WRITER_HEADER, current_lane
from npcworld.memory_client.port import MemoryPage, MemoryView, RetrievalRequest, RetrievedView
from npcworld.service_auth import client_headers
from npcworld.slow_calls import current_transaction, slow_call

__all__ = ["HttpMemoryReader"]

_RETRIEVED = TypeAdapter(list[RetrievedView])
_VIEWS = TypeAdapter(list[MemoryView])


class HttpMemoryReader:
    """Reads memory streams from the memory service at ``base_url`` (e.g. ``Settings().memory_api_url``).

    ``base_url`` may list several instances, comma-separated (``npcworld run --instances memory=2``): calls
    go to them in turn, and one that cannot be reached (killed, restarting) is skipped for the next, so a
    lost instance costs a caller no error while another answers. Every call is a read (a retrieval also
    marks what it returned as accessed, which repeating does not change), so repeating one elsewhere is safe.

    Errors: 404 → NotFoundError, 422 → ValidationError naming the field, 409 → PermanentError (the
    stream lives in another embedding space), no instance reachable or 5xx → TransientError.
    """

    def __init__(
        self, base_url: str, *, timeout: float = 10.0, client: httpx.AsyncClient | None = None
    ) -> None:
        urls = [u.strip().rstrip("/") for u in base_url.split(",") if u.strip()]
        if not urls:
            raise ValueError("no memory service URL given")
        self.base_url = ",".join(urls)
        self._clients = [client] if client is not None else [
            httpx.AsyncClient(base_url=url, timeout=timeout, headers=client_headers()) for url in urls
        ]
        self._urls = urls[: len(self._clients)]
        self._owns_client = client is None
        self._next = 0

    async def aclose(self) -> None:
        if self._owns_client:
            for client in self._clients:
                await client.aclose()

    async def retrieve(self, request: RetrievalRequest) -> list[RetrievedView]:
        """Top-k by recency + importance + relevance; the memory service marks them accessed."""
        body = await self._call("POST", "/internal/v1/retrieve", json=request.model_dump(mode="json"))
        return _RETRIEVED.validate_python(body)

    async def recent(
        self, tenant_id: str, world_id: str, npc_id: str, *, limit: int = 100,
        kinds: tuple[MemoryKind, ...] = (),
    ) -> list[MemoryView]:
        """The NPC's most recent memories (newest first), optionally only of some kinds."""
        params = _ids(tenant_id, world_id, npc_id) | {"limit": limit, "kind": list(kinds)}
        return _VIEWS.validate_python(await self._call("GET", "/internal/v1/recent", params=params))

    async def list_memories(
        self, tenant_id: str, world_id: str, npc_id: str, *, limit: int = 100,
        kinds: Sequence[MemoryKind] = (), since: datetime | None = None, until: datetime | None = None,
        cursor: str | None = None,
    ) -> MemoryPage:
        """One page of the NPC's memories newest first, filtered by kind and creation world time."""
        params: dict[str, Any] = _ids(tenant_id, world_id, npc_id) | {"limit": limit, "kind": list(kinds)}
        params |= {k: v for k, v in (("since", since), ("until", until), ("cursor", cursor)) if v is not None}
        params = {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in params.items()}
        return MemoryPage.model_validate(await self._call("GET", "/internal/v1/memories", params=params))

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        slow_call("retrieval", f"{method} {path}")
        cause, lane = current_cause(), current_lane()
        headers = {CAUSE_HEADER: cause.header()} if cause else {}
        if lane is not None:
            headers[LANE_HEADER] = lane  # the memory service serves ingest traffic after the world's
        if (writer := current_transaction()) is not None:
            headers[WRITER_HEADER] = writer  # ... except what a transaction waits for
        response = await self._send(method, path, headers, kwargs)
        if response.status_code < 300:
            return response.json()
        detail, field = _problem(response)
        if response.status_code == 404:
            raise NotFoundError(detail)
        if response.status_code == 422:
            raise ValidationError(detail, field=field)
        if response.status_code < 500:
            raise PermanentError(f"memory service refused the request ({response.status_code}): {detail}")
        raise TransientError(f"memory service failed ({response.status_code}): {detail}")


    async def _send(
        self, method: str, path: str, headers: dict[str, str] | None, kwargs: dict[str, Any]
    ) -> httpx.Response:
        """The first answer from the instances in turn (starting after the last one used)."""
        start, self._next = self._next, (self._next + 1) % len(self._clients)
        failures: list[str] = []
        for i in range(len(self._clients)):
            at = (start + i) % len(self._clients)
            try:
                return await self._clients[at].request(method, path, headers=headers, **kwargs)
            except httpx.HTTPError as exc:
                failures.append(f"{self._urls[at]}: {exc!r}")
        raise TransientError("memory service unreachable (" + "; ".join(failures) + ")")


def _ids(tenant_id: str, world_id: str, npc_id: str) -> dict[str, Any]:
    return {"tenant_id": tenant_id, "world_id": world_id, "npc_id": npc_id}


def _problem(response: httpx.Response) -> tuple[str, str | None]:
    try:
        body = response.json()
    except ValueError:
        return response.text[:500], None
    if not isinstance(body, dict):
        return str(body)[:500], None
    field = body.get("field")
    return str(body.get("detail") or body.get("title") or response.reason_phrase), field if field else None
