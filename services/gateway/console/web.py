"""What every console page shares: the templates, the signed-in key with its scopes, rendering with the
server time, reads on a connection of their own in a worker thread, and posted forms."""

from __future__ import annotations

import asyncio
import functools
import json
import math
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, quote

import jinja2
import markupsafe
import psycopg
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from npcworld.errors import NpcworldError
from services.gateway.console import reads
from services.gateway.console.replay import short
from services.gateway.console.session import COOKIE, SessionSigner
from services.gateway.repository import ApiKey, KeyRepository

__all__ = ["HERE", "Denied", "env", "form", "guarded", "page", "read", "signed_in", "signer"]

HERE = Path(__file__).parent
env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                          undefined=jinja2.ChainableUndefined)
env.filters["short"] = short
env.filters["compact"] = lambda v: markupsafe.Markup(  # JSON safe inside a <script> element
    json.dumps(v, ensure_ascii=False, separators=(",", ":"), default=str)
    .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
env.filters["gist"] = lambda v, width=160: (lambda t: t if len(t) <= width else t[: width - 1] + "…")(
    json.dumps(v, ensure_ascii=False, default=str))
env.globals.update(cos=math.cos, sin=math.sin, lag_window=reads.LAG_WINDOW)
env.filters["pretty"] = lambda v: json.dumps(v, ensure_ascii=False, indent=2, default=str)
T = TypeVar("T")


def signer(request: Request) -> SessionSigner:
    found = getattr(request.app.state, "console_signer", None)
    if found is None:
        found = request.app.state.console_signer = SessionSigner()
    return found


class Denied(Exception):
    def __init__(self, response: Response) -> None:
        self.response = response


async def signed_in(request: Request, scope: str = "read", world_id: str | None = None) -> ApiKey:
    """The signed-in key, holding ``scope`` (and reaching ``world_id``); raises Denied with the answer."""
    session = signer(request).verify(request.cookies.get(COOKIE))
    if session is None:
        raise Denied(RedirectResponse(f"/console/login?next={quote(request.url.path)}", 303))
    async with request.app.state.pool.connection() as conn:
        try:
            record = await KeyRepository(conn).get_key(session.tenant_id, session.key_id)
        except NpcworldError:
            record = None
    now = datetime.now(UTC)
    if record is None or record.revoked_at is not None or (record.expires_at and record.expires_at <= now):
        raise Denied(RedirectResponse("/console/login", 303))
    key = ApiKey(record.key_id, record.tenant_id, frozenset(record.scopes), record.rate_per_second,
                 record.burst, frozenset(record.worlds) if record.worlds is not None else None,
                 record.player_id)
    if not key.grant.allows(scope):
        raise Denied(page(request, "denied.html", None, status=403,
                            reason=f"this key lacks the {scope!r} scope"))
    if world_id is not None and not key.grant.reaches(world_id):
        raise Denied(page(request, "denied.html", None, status=403,
                            reason="this key is limited to other worlds"))
    return key


def page(request: Request, name: str, key: ApiKey | None, status: int = 200, **context: Any) -> HTMLResponse:
    started = getattr(request.state, "console_started", None)
    cookie = request.cookies.get(COOKIE) or ""
    html = env.get_template(name).render(
        key=key, csrf=signer(request).csrf(cookie) if cookie else "", path=request.url.path, **context)
    response = HTMLResponse(html, status_code=status)
    if started is not None:
        response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"
    return response


async def read(request: Request, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(conn, *args)`` on a connection of its own, in a worker thread."""
    url = request.app.state.db_circuit.database_url

    def run() -> T:
        with psycopg.connect(url, autocommit=True) as conn:
            return fn(conn, *args, **kwargs)

    return await asyncio.to_thread(run)


def guarded(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Turns Denied into its response and stamps the server time (``Server-Timing``)."""
    @functools.wraps(handler)
    async def wrapper(request: Request, *args: Any, **kwargs: Any) -> Response:
        request.state.console_started = time.perf_counter()
        try:
            response: Response = await handler(request, *args, **kwargs)
        except Denied as denied:
            return denied.response
        return response

    return wrapper


async def form(request: Request) -> dict[str, str]:
    body = (await request.body()).decode("utf-8", "replace")
    return {k: v[0] for k, v in parse_qs(body, max_num_fields=20).items()}


