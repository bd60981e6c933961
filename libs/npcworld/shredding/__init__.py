"""Crypto-shredding of what players say: per-player data keys, sealing on append, opening on read."""

from npcworld.shredding.cipher import FORGOTTEN, DataKey, new_key, open_text, seal_text, token_key_id
from npcworld.shredding.fields import SEALED_FIELDS, owner_of
from npcworld.shredding.keys import delete_key, forgotten_among, keys_by_id, keys_for, player_known
from npcworld.shredding.sealing import reveal, reveal_sync, seal_payloads

__all__ = [
    "FORGOTTEN",
    "SEALED_FIELDS",
    "DataKey",
    "delete_key",
    "forgotten_among",
    "keys_by_id",
    "keys_for",
    "new_key",
    "open_text",
    "owner_of",
    "player_known",
    "reveal",
    "reveal_sync",
    "seal_payloads",
    "seal_text",
    "token_key_id",
]
