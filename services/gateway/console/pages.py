"""The console's routes. Every page needs a signed-in session whose key holds ``read`` (and reaches the
world it shows); redriving a dead letter needs ``admin``. Pages read through ``reads`` (one tenant's rows
only) in a worker thread; the memory search goes to the memory service like the public API does."""

from __future__ import annotations

import asyncio
import json
import math
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, quote

import jinja2
import markupsafe
import psycopg
from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response, StreamingResponse

from npcworld.contracts import EVENT_TYPES
from npcworld.dead_letters import redrive
from npcworld.errors import NpcworldError
from npcworld.eventlog import explain, memories_from_log
from npcworld.eventstore import EventFilter
from npcworld.memory_client import RetrievalRequest, RetrievedView
from services.gateway.console import reads
from services.gateway.console.replay import short, state_at, tree_of
from services.gateway.console.session import COOKIE, LIFETIME_S, SessionSigner, valid_csrf
from services.gateway.repository import ApiKey, KeyRepository
from services.gateway.routes.memories import _reader
from services.gateway.routes.stream import _events

__all__ = ["router"]

router = APIRouter(prefix="/console", include_in_schema=False)
_HERE = Path(__file__).parent
_STATIC = {"console.css": "text/css", "console.js": "text/javascript"}
_env = jinja2.Environment(loader=jinja2.FileSystemLoader(_HERE / "templates"), autoescape=True,
                          undefined=jinja2.ChainableUndefined)
_env.filters["short"] = short
_env.filters["compact"] = lambda v: markupsafe.Markup(  # JSON safe inside a <script> element
    json.dumps(v, ensure_ascii=False, separators=(",", ":"), default=str)
    .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
_env.filters["gist"] = lambda v, width=160: (lambda t: t if len(t) <= width else t[: width - 1] + "…")(
    json.dumps(v, ensure_ascii=False, default=str))
_env.globals.update(cos=math.cos, sin=math.sin, lag_window=reads.LAG_WINDOW)
_env.filters["pretty"] = lambda v: json.dumps(v, ensure_ascii=False, indent=2, default=str)
T = TypeVar("T")


def _signer(request: Request) -> SessionSigner:
    signer = getattr(request.app.state, "console_signer", None)
    if signer is None:
        signer = request.app.state.console_signer = SessionSigner()
    return signer


class _Denied(Exception):
    def __init__(self, response: Response) -> None:
        self.response = response


async def _key(request: Request, scope: str = "read", world_id: str | None = None) -> ApiKey:
    """The signed-in key, holding ``scope`` (and reaching ``world_id``); raises _Denied with the answer."""
    session = _signer(request).verify(request.cookies.get(COOKIE))
    if session is None:
        raise _Denied(RedirectResponse(f"/console/login?next={quote(request.url.path)}", 303))
    async with request.app.state.pool.connection() as conn:
        try:
            record = await KeyRepository(conn).get_key(session.tenant_id, session.key_id)
        except NpcworldError:
            record = None
    now = datetime.now(UTC)
    if record is None or record.revoked_at is not None or (record.expires_at and record.expires_at <= now):
        raise _Denied(RedirectResponse("/console/login", 303))
    key = ApiKey(record.key_id, record.tenant_id, frozenset(record.scopes), record.rate_per_second,
                 record.burst, frozenset(record.worlds) if record.worlds is not None else None,
                 record.player_id)
    if not key.grant.allows(scope):
        raise _Denied(_page(request, "denied.html", None, status=403,
                            reason=f"this key lacks the {scope!r} scope"))
    if world_id is not None and not key.grant.reaches(world_id):
        raise _Denied(_page(request, "denied.html", None, status=403,
                            reason="this key is limited to other worlds"))
    return key


def _page(request: Request, name: str, key: ApiKey | None, status: int = 200, **context: Any) -> HTMLResponse:
    started = getattr(request.state, "console_started", None)
    cookie = request.cookies.get(COOKIE) or ""
    html = _env.get_template(name).render(
        key=key, csrf=_signer(request).csrf(cookie) if cookie else "", path=request.url.path, **context)
    response = HTMLResponse(html, status_code=status)
    if started is not None:
        response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"
    return response


async def _read(request: Request, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(conn, *args)`` on a connection of its own, in a worker thread."""
    url = request.app.state.db_circuit.database_url

    def run() -> T:
        with psycopg.connect(url, autocommit=True) as conn:
            return fn(conn, *args, **kwargs)

    return await asyncio.to_thread(run)


def _guarded(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Turns _Denied into its response and stamps the server time (``Server-Timing``)."""
    import functools

    @functools.wraps(handler)
    async def wrapper(request: Request, *args: Any, **kwargs: Any) -> Response:
        request.state.console_started = time.perf_counter()
        try:
            response: Response = await handler(request, *args, **kwargs)
        except _Denied as denied:
            return denied.response
        return response

    return wrapper


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


async def _form(request: Request) -> dict[str, str]:
    body = (await request.body()).decode("utf-8", "replace")
    return {k: v[0] for k, v in parse_qs(body, max_num_fields=20).items()}


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
    return _page(request, "why.html", key, x=x, names=names)


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
