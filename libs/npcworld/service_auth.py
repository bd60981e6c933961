"""The shared service credential of internal HTTP surfaces (the memory service's API).

Services call each other's internal APIs with ``Authorization: Bearer <NPCWORLD_SERVICE_TOKEN>``; an API
with a token configured refuses every request without it (401). Embedded mode binds those APIs to 127.0.0.1
(``npcworld run`` still gives its processes a fresh token each run); a production deployment
(``DATABASE_URL`` and ``KAFKA_BOOTSTRAP_SERVERS`` set) must set it: an internal API refuses to start
without one.
"""

from __future__ import annotations

import hmac
import os

from npcworld.errors import ConfigError

__all__ = ["TOKEN_ENV", "authorized", "client_headers", "require_in_production", "service_token"]

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


def require_in_production(embedded: bool, surface: str) -> str | None:
    """The token for ``surface``; outside embedded mode a missing or short one is a ConfigError."""
    token = service_token()
    if embedded:
        return token
    if token is None:
        raise ConfigError(f"{TOKEN_ENV} is not set: the {surface} refuses to run unauthenticated in"
                          " production (set one random value, 16+ characters, on every npcworld process)")
    if len(token) < _MIN_LENGTH:
        raise ConfigError(f"{TOKEN_ENV} is shorter than {_MIN_LENGTH} characters")
    return token
