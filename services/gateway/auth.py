"""API-key authentication, per-key rate limits (429 with Retry-After) and scope checks."""

from __future__ import annotations

import math
import time
from typing import Annotated, cast

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import Scope

from services.gateway.domain import Bucket, take
from services.gateway.repository import ApiKey, KeyRepository

__all__ = ["Caller", "RateLimiter", "find_key", "require", "require_world"]

_bearer = HTTPBearer(auto_error=False, scheme_name="ApiKey",
                     description="API key or player session token: `Authorization: Bearer npcw_...`")


class RateLimiter:
    """One token bucket per key in this process (each gateway replica limits on its own)."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self.buckets: dict[str, Bucket] = {}

    def admit(self, key: ApiKey) -> float:
        """0.0 when the request may pass, else the seconds to wait."""
        rate = key.rate_per_second or self.rate
        burst = key.burst or (self.burst if key.rate_per_second is None else max(1, math.ceil(rate)))
        bucket, wait = take(self.buckets.get(key.key_id), time.monotonic(), rate, burst)
        self.buckets[key.key_id] = bucket
        return wait


_FOUND = "npcworld_api_key"  # the key a middleware looked up for this request: (secret, key or None)


async def find_key(scope: Scope, secret: str) -> ApiKey | None:
    """The live key with this secret, looked up once per request: the idempotency layer (before routing)
    and the route's authentication ask for the same key."""
    state = scope.setdefault("state", {})
    found = state.get(_FOUND)
    if found is not None and found[0] == secret:
        return cast("ApiKey | None", found[1])
    async with scope["app"].state.pool.connection() as conn:
        key = await KeyRepository(conn).find_key(secret)
    state[_FOUND] = (secret, key)
    return key


async def _caller(
    request: Request, creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> ApiKey:
    if creds is None:
        raise HTTPException(401, "missing API key", headers={"WWW-Authenticate": "Bearer"})
    key = await find_key(request.scope, creds.credentials)
    if key is None:
        raise HTTPException(401, "unknown or revoked API key", headers={"WWW-Authenticate": "Bearer"})
    wait = request.app.state.limiter.admit(key)
    if wait > 0:
        raise HTTPException(
            429,
            f"rate limit of this API key exceeded; retry in {wait:.2f}s",
            headers={"Retry-After": str(max(1, math.ceil(wait)))},
        )
    return key


Caller = Annotated[ApiKey, Depends(_caller)]


def require(scope: str) -> object:
    """A dependency that admits only keys holding ``scope`` (or a scope implying it) and, on a route of one
    world, only keys that reach that world (``services.gateway.domain.grants``)."""

    async def check(key: Caller, request: Request) -> ApiKey:
        grant = key.grant
        if not grant.allows(scope):
            raise HTTPException(403, f"this API key lacks the {scope!r} scope")
        world_id = request.path_params.get("world_id")
        if world_id is not None and not grant.reaches(world_id):
            # Said the same whether or not the world exists: a limited key learns nothing of the others.
            raise HTTPException(403, "this API key is limited to other worlds")
        return key

    return Depends(check)


def require_world(key: ApiKey, world_id: str) -> None:
    """For a world named in a request body (a new world, a fork's target): the key must reach it."""
    if not key.grant.reaches(world_id):
        raise HTTPException(403, "this API key is limited to other worlds")
