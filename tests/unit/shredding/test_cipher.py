"""Sealing a player's words with its data key: what opens, what never does, and whose words a field holds."""

from __future__ import annotations

import uuid

from npcworld.shredding import FORGOTTEN, DataKey, new_key, open_text, owner_of, seal_text, token_key_id


def test_a_sealed_text_opens_with_its_key_and_hides_the_words() -> None:
    key = new_key("studio")
    token = seal_text(key, "my secret is swordfish")
    assert "swordfish" not in token and token_key_id(token) == key.key_id
    assert open_text(key, token) == "my secret is swordfish"


def test_without_the_key_a_sealed_text_reads_forgotten() -> None:
    token = seal_text(new_key("studio"), "hello")
    assert open_text(None, token) == FORGOTTEN


def test_another_key_or_another_tenant_never_opens_a_text() -> None:
    key = new_key("studio")
    token = seal_text(key, "hello")
    assert open_text(new_key("studio"), token) == FORGOTTEN
    same_secret_other_tenant = DataKey(key.key_id, "other-studio", key.secret)
    assert open_text(same_secret_other_tenant, token) == FORGOTTEN


def test_a_tampered_or_truncated_token_reads_forgotten() -> None:
    key = new_key("studio")
    token = seal_text(key, "hello there")
    flipped = token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]
    assert open_text(key, flipped) == FORGOTTEN
    assert open_text(key, token[:-10]) == FORGOTTEN
    assert open_text(key, f"sealed:v1:{key.key_id}:!!!") == FORGOTTEN


def test_sealing_is_deterministic_per_key_so_copies_stay_equal() -> None:
    key = new_key("studio")
    assert seal_text(key, "hello") == seal_text(key, "hello")
    assert seal_text(key, "hello") != seal_text(key, "hello!")
    assert seal_text(key, "hello") != seal_text(new_key("studio"), "hello")


def test_only_sealed_values_name_a_key() -> None:
    assert token_key_id("plain words") is None
    assert token_key_id("sealed:v1:not-a-uuid:abc") is None
    assert token_key_id(42) is None
    key_id = uuid.uuid4()
    assert token_key_id(f"sealed:v1:{key_id}:abc") == key_id


def test_the_owner_of_a_payloads_words_is_the_player_it_names() -> None:
    assert owner_of("PlayerSpoke", {"player_id": "p1", "text": "hi"}) == "p1"
    assert owner_of("NpcReplied", {"player_id": "p1", "text": "hello"}) == "p1"
    assert owner_of("RelationshipChanged", {"other_id": "player:p1"}) == "p1"
    assert owner_of("RelationshipChanged", {"other_id": "sam"}) is None
    assert owner_of("MemoryRecorded", {"subject": "player p1"}) == "p1"
    assert owner_of("MemoryRecorded", {"subject": "sam", "told_by": "player:p2"}) == "p2"
    assert owner_of("MemoryRecorded", {"subject": "the stove", "told_by": "npc:sam"}) is None
    assert owner_of("ObservationMade", {"description": "a player said hi"}) is None
