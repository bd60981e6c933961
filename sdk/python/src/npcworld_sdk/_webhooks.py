"""Webhook deliveries: verify ``Npcworld-Signature`` (HMAC-SHA256 over ``"<timestamp>.<raw body>"``),
then parse.

The scheme is the one docs/webhooks.md describes: header ``t=<unix seconds>,v1=<hex>``, keyed by the
subscription's ``whsec_...`` secret; a timestamp further than ``tolerance`` seconds from now is refused
(a replay).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from npcworld_sdk._errors import NpcworldError

__all__ = [
    "SIGNATURE_HEADER",
    "WebhookDelivery",
    "WebhookSignatureError",
    "parse_webhook",
    "sign_webhook",
    "verify_webhook",
]

SIGNATURE_HEADER = "Npcworld-Signature"


class WebhookSignatureError(NpcworldError):
    """The delivery's signature is missing, malformed, wrong or too old."""


@dataclass(frozen=True)
class WebhookDelivery:
    """A verified delivery: the event's id, ``seq`` and type, and its stored ``event`` envelope."""

    event_id: str
    delivery_id: int
    seq: int
    type: str
    world_id: str
    event: dict[str, Any]


def sign_webhook(secret: str, body: bytes, timestamp: int | None = None) -> str:
    """The ``Npcworld-Signature`` value for ``body`` (what the server sends; handy in a receiver's tests)."""
    stamp = int(time.time()) if timestamp is None else timestamp
    digest = hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={stamp},v1={digest}"


def verify_webhook(
    secret: str, header: str | None, body: bytes, *, tolerance: int = 300, now: float | None = None
) -> None:
    """Raise ``WebhookSignatureError`` unless ``header`` signs the raw ``body`` with ``secret``, recently."""
    if not header:
        raise WebhookSignatureError(f"no {SIGNATURE_HEADER} header")
    parts = dict(p.strip().split("=", 1) for p in header.split(",") if "=" in p)
    try:
        stamp = int(parts["t"])
    except (KeyError, ValueError):
        raise WebhookSignatureError("the signature has no timestamp") from None
    current = time.time() if now is None else now
    if abs(current - stamp) > tolerance:
        raise WebhookSignatureError(f"the signature's timestamp is more than {tolerance} s from now")
    expected = sign_webhook(secret, body, stamp).split("v1=", 1)[1]
    if not hmac.compare_digest(expected, parts.get("v1", "")):
        raise WebhookSignatureError("the signature does not match the body")


def parse_webhook(
    secret: str, headers: Mapping[str, str], body: bytes, *, tolerance: int = 300
) -> WebhookDelivery:
    """Verify a delivery (``headers`` as received, any case) and return it parsed."""
    signature = next((v for k, v in headers.items() if k.lower() == SIGNATURE_HEADER.lower()), None)
    verify_webhook(secret, signature, body, tolerance=tolerance)
    data = json.loads(body)
    return WebhookDelivery(
        event_id=str(data["event_id"]),
        delivery_id=int(data["delivery_id"]),
        seq=int(data["seq"]),
        type=str(data["type"]),
        world_id=str(data["world_id"]),
        event=dict(data["event"]),
    )
