"""The console's routes. Every page needs a signed-in session whose key holds ``read`` (and reaches the
world it shows); redriving a dead letter needs ``admin``. Pages read through ``reads`` (one tenant's rows
only) in a worker thread; the memory search goes to the memory service like the public API does."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import psycopg
from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, RedirectResponse, Response, StreamingResponse

from npcworld.contracts import EVENT_TYPES
from npcworld.dead_letters import redrive
from npcworld.errors import NpcworldError
from npcworld.eventlog import explain, memories_from_log
from npcworld.eventstore import EventFilter
from npcworld.memory_client import RetrievalRequest, RetrievedView
from services.gateway.console import fork_view, reads, rerun_view
from services.gateway.console.replay import state_at, tree_of
from services.gateway.console.session import COOKIE, LIFETIME_S, valid_csrf
from services.gateway.console.web import HERE as _HERE
from services.gateway.console.web import Denied as _Denied
from services.gateway.console.web import form as _form
from services.gateway.console.web import guarded as _guarded
from services.gateway.console.web import page as _page
from services.gateway.console.web import read as _read
from services.gateway.console.web import signed_in as _key
from services.gateway.console.web import signer as _signer
from services.gateway.repository import ApiKey, KeyRepository
from services.gateway.routes.memories import _reader
from services.gateway.routes.stream import _events

__all__ = ["router"]

router = APIRouter(prefix="/console", include_in_schema=False)
_STATIC = {"console.css": "text/css", "console.js": "text/javascript"}
router.include_router(fork_view.router)
router.include_router(rerun_view.router)


@router.get("/static/{name}")
async def static(name: str) -> Response:
    if name not in _STATIC:
        return Response(status_code=404)
    return FileResponse(_HERE / "static" / name, media_type=_STATIC[name],
                        headers={"Cache-Control": "max-age=300"})


@router.get("")
async def home(request: Request) -> Response:
    return RedirectResponse("/console/worlds", 303)


@router.get("/login")
async def login_form(request: Request, next: str = "/console/worlds") -> Response:
    return _page(request, "login.html", None, next=_local(next), error=None)


def _local(target: str) -> str:
    return target if target.startswith("/console") and "//" not in target else "/console/worlds"


@router.post("/login")
async def login(request: Request) -> Response:
    form = await _form(request)
    secret = form.get("api_key", "").strip()
    async with request.app.state.pool.connection() as conn:
        key = await KeyRepository(conn).find_key(secret) if secret else None
    if key is None or not key.grant.allows("read"):
        why = "unknown or revoked API key" if key is None else "this key lacks the 'read' scope"
        return _page(request, "login.html", None, status=401, next=_local(form.get("next", "")), error=why)
    response = RedirectResponse(_local(form.get("next", "/console/worlds")), 303)
    response.set_cookie(COOKIE, _signer(request).sign(key.tenant_id, key.key_id), max_age=LIFETIME_S,
                        httponly=True, samesite="strict", path="/console",
                        secure=request.url.scheme == "https")
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    form = await _form(request)
    response = RedirectResponse("/console/login", 303)
    if valid_csrf(_signer(request), request.cookies.get(COOKIE), form.get("csrf")):
        response.delete_cookie(COOKIE, path="/console")
    return response


@router.get("/worlds")
@_guarded
async def worlds(request: Request) -> Response:
    key = await _key(request)
    found = await _read(request, reads.worlds, key.tenant_id, key.grant.worlds)
    return _page(request, "worlds.html", key, worlds=found)


async def _world(request: Request, key: ApiKey, world_id: str) -> reads.World:
    w = await _read(request, reads.world, key.tenant_id, world_id)
    if not w.exists:
        raise _Denied(_page(request, "denied.html", key, status=404, reason=f"no world {world_id!r}"))
    return w


@router.get("/worlds/{world_id}")
@_guarded
async def world(request: Request, world_id: str, hours: float = 2.0) -> Response:
    key = await _key(request, world_id=world_id)
    w = await _world(request, key, world_id)
    span = timedelta(hours=min(max(hours, 0.05), 24 * 7))
    line = await _read(request, reads.timeline, key.tenant_id, w, span)
    now = state_at(w.names, line.changes, None, line.start)
    data = {
        "world": world_id, "tile_map": w.tile_map, "since": _ms(line.since), "last": _ms(line.last),
        "last_seq": line.last_seq,
        "places": [{"path": p.path, "area": p.area, "sector": p.sector, "arena": p.arena} for p in w.places],
        "start": {n: {"path": f.path, "tile": f.tile, "description": f.description, "emoji": f.emoji,
                      "name": f.name} for n, f in line.start.items()},
        "changes": [c.as_json() for c in line.changes],
    }
    return _page(request, "world.html", key, w=w, line=line, now=now, tree=tree_of(w.places, now.values()),
                 data=data, hours=span.total_seconds() / 3600)


def _ms(value: datetime | None) -> int | None:
    return int(value.timestamp() * 1000) if value else None


@router.get("/worlds/{world_id}/stream")
@_guarded
async def stream(request: Request, world_id: str, after: int = 0, type: str = "", npc: str = "") -> Response:
    """The world's events after ``after``, live (the public event stream's loop, signed in by cookie)."""
    key = await _key(request, world_id=world_id)
    await _world(request, key, world_id)
    types = tuple(t for t in type.split(",") if t in EVENT_TYPES)
    where = EventFilter(tenant_id=key.tenant_id, world_id=world_id, npc_id=npc or None, types=types)
    return StreamingResponse(_events(request, where, max(0, after)), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.get("/worlds/{world_id}/npcs/{npc_id}")
@_guarded
async def npc(request: Request, world_id: str, npc_id: str, q: str = "") -> Response:
    key = await _key(request, world_id=world_id)
    w = await _world(request, key, world_id)
    if npc_id not in w.npcs:
        return _page(request, "denied.html", key, status=404, reason=f"no NPC {npc_id!r} in {world_id!r}")
    page = await _read(request, reads.npc_page, key.tenant_id, w, npc_id)
    found: list[RetrievedView] = []
    error = None
    if q.strip() and page.now is not None:
        try:
            found = await _reader(request).retrieve(RetrievalRequest(
                tenant_id=key.tenant_id, world_id=world_id, npc_id=npc_id, query=q.strip()[:2000], k=10,
                now=page.now))
        except NpcworldError as exc:
            error = str(exc)
    by_id = {m.memory_id: m for m in page.memories}
    reflections = [m for m in page.memories if m.kind == "reflection"]
    return _page(request, "npc.html", key, w=w, npc_id=npc_id, p=page, q=q, found=found, error=error,
                 by_id=by_id, reflections=reflections, names=w.names)


@router.get("/why/{event_id}")
@_guarded
async def why(request: Request, event_id: str) -> Response:
    key = await _key(request)
    try:
        wanted = uuid.UUID(event_id)
    except ValueError:
        return _page(request, "denied.html", key, status=404, reason="not an event id")
    x = await _read(request, explain, wanted, memories_from_log, key.tenant_id)
    if x is None or not key.grant.reaches(x.event.world_id):
        return _page(request, "denied.html", key, status=404, reason=f"no event {event_id}")
    names = (await _read(request, reads.world, key.tenant_id, x.event.world_id)).names
    return _page(request, "why.html", key, x=x, names=names, admin=key.grant.allows("admin"),
                 rerun=rerun_view.options(request))


@router.get("/ops")
@_guarded
async def ops(request: Request, done: str = "") -> Response:
    key = await _key(request)
    o = await _read(request, reads.ops_page, key.tenant_id)
    return _page(request, "ops.html", key, o=o, done=done, admin=key.grant.allows("admin"))


@router.post("/ops/dead-letters/{dead_id}/redrive")
@_guarded
async def redrive_one(request: Request, dead_id: int) -> Response:
    key = await _key(request, "admin")
    form = await _form(request)
    if not valid_csrf(_signer(request), request.cookies.get(COOKIE), form.get("csrf")):
        return _page(request, "denied.html", key, status=403, reason="the form expired: reload the page")

    def send(conn: psycopg.Connection[Any]) -> bool:
        if dead_id not in {d["id"] for d in reads.dead_letters_of(conn, key.tenant_id, 1000)}:
            return False
        redrive(conn, [dead_id])
        return True

    if not await _read(request, send):
        return _page(request, "denied.html", key, status=404, reason=f"no dead letter {dead_id}")
    return RedirectResponse(f"/console/ops?done={dead_id}", 303)


@router.get("/events")
@_guarded
async def events(
    request: Request, world: str = "", npc: str = "", type: str = "", limit: int = 100
) -> Response:
    key = await _key(request, world_id=world or None)
    types = tuple(t for t in type.split(",") if t in EVENT_TYPES)
    only = key.grant.worlds
    if not world and only is not None:
        return _page(request, "denied.html", key, status=403, reason="this key must name one of its worlds")
    found = await _read(request, reads.recent_events, key.tenant_id, world_id=world or None,
                        npc_id=npc or None, types=types, limit=min(max(limit, 1), 500))
    return _page(request, "events.html", key, events=found, world=world, npc=npc, type=type,
                 types=sorted(EVENT_TYPES), last_seq=found[-1].seq if found else 0)
