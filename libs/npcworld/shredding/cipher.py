"""Sealing one player-originated text with the player's data key (AES-256-GCM) and opening it again."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import uuid
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["FORGOTTEN", "PREFIX", "DataKey", "new_key", "open_text", "seal_text", "token_key_id"]

# What a reader sees in place of a text whose key is gone (the player was forgotten).
FORGOTTEN = "[forgotten]"
# A sealed text in a stored payload: PREFIX, the key's id, a colon, base64url(nonce + ciphertext + tag).
PREFIX = "sealed:v1:"
_NONCE = 12


@dataclass(frozen=True)
class DataKey:
    """One player's data key within one tenant."""

    key_id: uuid.UUID
    tenant_id: str
    secret: bytes


def new_key(tenant_id: str) -> DataKey:
    """A fresh random 256-bit key."""
    return DataKey(uuid.uuid4(), tenant_id, AESGCM.generate_key(bit_length=256))


def _aad(key: DataKey) -> bytes:
    # Binds a sealed text to its tenant and key: a token copied into another tenant's payload does not open.
    return f"{key.tenant_id}\x1f{key.key_id}".encode()


def _nonce(key: DataKey, text: bytes) -> bytes:
    # A synthetic nonce (as in SIV): derived from the text under a subkey of the player's key, so a nonce
    # repeats only with its text. Sealing is deterministic: a fork's copy, or a retrieval appended twice,
    # stores the same token as the original; what it shows is only that two texts of one player are equal.
    subkey = hmac.new(key.secret, b"npcworld sealed-text nonce", hashlib.sha256).digest()
    return hmac.new(subkey, _aad(key) + b"\x00" + text, hashlib.sha256).digest()[:_NONCE]


def seal_text(key: DataKey, text: str) -> str:
    """The token that stands for ``text`` in storage (the same text under the same key: the same token)."""
    raw = text.encode()
    nonce = _nonce(key, raw)
    sealed = AESGCM(key.secret).encrypt(nonce, raw, _aad(key))
    return f"{PREFIX}{key.key_id}:{base64.urlsafe_b64encode(nonce + sealed).decode()}"


def token_key_id(value: object) -> uuid.UUID | None:
    """The key id a stored value was sealed with, or None when it is not a sealed text."""
    if not isinstance(value, str) or not value.startswith(PREFIX):
        return None
    key_id, _, _ = value[len(PREFIX):].partition(":")
    try:
        return uuid.UUID(key_id)
    except ValueError:
        return None


def open_text(key: DataKey | None, token: str) -> str:
    """The text a token stands for; ``FORGOTTEN`` when the key is gone or the token does not open with it."""
    if key is None or token_key_id(token) != key.key_id:
        return FORGOTTEN
    _, _, body = token[len(PREFIX):].partition(":")
    try:
        raw = base64.urlsafe_b64decode(body.encode())
        return AESGCM(key.secret).decrypt(raw[:_NONCE], raw[_NONCE:], _aad(key)).decode()
    except (InvalidTag, ValueError, binascii.Error):
        return FORGOTTEN
