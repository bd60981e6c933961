"""HMAC-SHA256 over ``"<timestamp>.<body>"`` with the subscription's secret (see docs/webhooks.md)."""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["SIGNATURE_HEADER", "sign", "signature_header", "verify"]

SIGNATURE_HEADER = "Npcworld-Signature"


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """Hex HMAC-SHA256 of ``f"{timestamp}.".encode() + body`` keyed by ``secret``."""
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature_header(secret: str, timestamp: int, body: bytes) -> str:
    """The header value: ``t=<unix seconds>,v1=<hex signature>``."""
    return f"t={timestamp},v1={sign(secret, timestamp, body)}"


def verify(secret: str, header: str, body: bytes, now: int, tolerance: int = 300) -> bool:
    """True when ``header`` signs ``body`` with ``secret``, stamped within ``tolerance`` s of ``now``."""
    parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
    try:
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs(now - timestamp) > tolerance:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body), parts.get("v1", ""))
