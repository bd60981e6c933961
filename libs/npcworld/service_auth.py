"""The shared service credential of internal HTTP surfaces (the memory service's API, the webhooks service's
delivery log).

Services call each other's internal APIs with ``Authorization: Bearer <NPCWORLD_SERVICE_TOKEN>``; an API
with a token configured refuses every request without it (401). An internal API listening beyond loopback
(a container, ``MEMORY_API_HOST=0.0.0.0``) must have a token and refuses to start without one; on loopback
(the default, and every embedded run) it is optional, and ``npcworld run`` still gives its processes a fresh
one each run.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from npcworld.errors import ConfigError

__all__ = ["TOKEN_ENV", "authorized", "client_headers", "internal_app", "is_loopback", "require_token",
           "required_token", "service_token"]

TOKEN_ENV = "NPCWORLD_SERVICE_TOKEN"
_MIN_LENGTH = 16


def service_token() -> str | None:
    """The configured token (None when unset or blank)."""
    value = os.environ.get(TOKEN_ENV, "").strip()
    return value or None


def client_headers() -> dict[str, str]:
    """Headers an internal client sends: the bearer token when one is configured."""
    token = service_token()
    return {"Authorization": f"Bearer {token}"} if token else {}


def authorized(header: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header carries ``token`` (compared in constant time)."""
    scheme, _, given = (header or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


def require_token(app: FastAPI, token: str) -> None:
    """Every route of ``app`` but /healthz answers 401 unless the request carries ``token``."""

    @app.middleware("http")
    async def service_credential(request: Request, call_next: Any) -> Any:
        if request.url.path != "/healthz" and not authorized(request.headers.get("authorization"), token):
            return JSONResponse({"title": "Unauthorized", "detail": "the service credential is missing or"
                                 " wrong", "field": None}, status_code=401,
                                headers={"WWW-Authenticate": "Bearer"})
        return await call_next(request)


def internal_app(title: str, token: str | None, **fastapi: Any) -> FastAPI:
    """A service's internal API: ``GET /healthz`` open to all, every other route behind ``token`` (if any)."""
    app = FastAPI(title=title, version="1", **fastapi)
    if token is not None:
        require_token(app, token)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app


def is_loopback(host: str) -> bool:
    """Whether listening on ``host`` reaches only this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name that may resolve anywhere


def required_token(host: str, surface: str) -> str | None:
    """The token for ``surface`` listening on ``host``; beyond loopback a missing or short one is a
    ConfigError."""
    token = service_token()
    if is_loopback(host) and token is None:
        return None
    if token is None:
        raise ConfigError(f"{TOKEN_ENV} is not set: the {surface} listens on {host} and refuses to run"
                          " unauthenticated (set one random value, 16+ characters, on every process)")
    if len(token) < _MIN_LENGTH:
        raise ConfigError(f"{TOKEN_ENV} is shorter than {_MIN_LENGTH} characters")
    return token
