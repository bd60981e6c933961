"""API-key authentication and scope checks."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from services.gateway.repository import ApiKey, GatewayRepository

__all__ = ["Caller", "require"]

_bearer = HTTPBearer(auto_error=False, description="API key: `Authorization: Bearer npcw_...`")


async def _caller(
    request: Request, creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> ApiKey:
    if creds is None:
        raise HTTPException(401, "missing API key", headers={"WWW-Authenticate": "Bearer"})
    async with request.app.state.pool.connection() as conn:
        key = await GatewayRepository(conn).find_key(creds.credentials)
    if key is None:
        raise HTTPException(401, "unknown or revoked API key", headers={"WWW-Authenticate": "Bearer"})
    return key


Caller = Annotated[ApiKey, Depends(_caller)]


def require(scope: str) -> object:
    """A dependency that admits only keys holding ``scope``."""

    async def check(key: Caller) -> ApiKey:
        if scope not in key.scopes:
            raise HTTPException(403, f"this API key lacks the {scope!r} scope")
        return key

    return Depends(check)
