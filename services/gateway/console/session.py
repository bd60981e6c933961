"""Console sign-in: an API key is exchanged for a signed session cookie naming the key (never its secret).

The cookie is ``<tenant_id>.<key_id>.<expires unix>.<HMAC-SHA256>``, HttpOnly and SameSite=Strict; every
request checks it again against the key's row, so a revoked or expired key ends its sessions at once. Forms
that act carry a CSRF token derived from the session (a page of another site can neither read it nor send
the cookie). The signing secret is ``CONSOLE_SESSION_SECRET`` or, unset, one drawn per gateway process
(sessions then end with the process and do not cross replicas).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass

__all__ = ["COOKIE", "Session", "SessionSigner", "csrf_token", "valid_csrf"]

COOKIE = "npcw_console"
LIFETIME_S = 8 * 3600


@dataclass(frozen=True)
class Session:
    tenant_id: str
    key_id: str
    expires: int


class SessionSigner:
    def __init__(self, secret: bytes | None = None) -> None:
        configured = os.environ.get("CONSOLE_SESSION_SECRET")
        self.secret = secret or (configured.encode() if configured else secrets.token_bytes(32))

    def _mac(self, text: str) -> str:
        digest = hmac.new(self.secret, text.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def sign(self, tenant_id: str, key_id: str, now: float | None = None) -> str:
        expires = int((now if now is not None else time.time()) + LIFETIME_S)
        body = f"{_b64(tenant_id)}.{_b64(key_id)}.{expires}"
        return f"{body}.{self._mac(body)}"

    def verify(self, cookie: str | None, now: float | None = None) -> Session | None:
        """The session a cookie names, or None (missing, tampered with, malformed or expired)."""
        if not cookie or cookie.count(".") != 3:
            return None
        body, mac = cookie.rsplit(".", 1)
        if not hmac.compare_digest(mac, self._mac(body)):
            return None
        tenant, key, expires = body.split(".")
        if not expires.isdigit() or int(expires) < (now if now is not None else time.time()):
            return None
        try:
            return Session(_unb64(tenant), _unb64(key), int(expires))
        except ValueError:
            return None

    def csrf(self, cookie: str) -> str:
        return self._mac("csrf:" + cookie)


def csrf_token(signer: SessionSigner, cookie: str) -> str:
    return signer.csrf(cookie)


def valid_csrf(signer: SessionSigner, cookie: str | None, token: str | None) -> bool:
    return bool(cookie and token) and hmac.compare_digest(signer.csrf(cookie or ""), token or "")


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _unb64(text: str) -> str:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
