"""The signature of an outgoing request: HMAC-SHA256 over ``"<timestamp>.<body>"`` with the receiver's
secret, sent as ``Npcworld-Signature: t=<unix seconds>,v1=<hex>`` (the scheme of webhook deliveries,
docs/webhooks.md; validator calls are signed the same way)."""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["SIGNATURE_HEADER", "signature_header"]

SIGNATURE_HEADER = "Npcworld-Signature"


def signature_header(secret: str, timestamp: int, body: bytes) -> str:
    """The header value for ``body`` sent at ``timestamp`` (unix seconds): ``t=<timestamp>,v1=<hex>``."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"
