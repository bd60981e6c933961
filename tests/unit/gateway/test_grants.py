"""Key scopes and their implications: a game server's key cannot administer, a session only chats."""

from __future__ import annotations

from services.gateway.domain.grants import SCOPES, Grant, effective_scopes


def test_each_scope_implies_only_what_is_narrower_in_its_line() -> None:
    assert effective_scopes(["chat"]) == {"chat"}
    assert effective_scopes(["play"]) == {"play", "chat"}
    assert effective_scopes(["write"]) == {"write", "play", "chat"}
    assert effective_scopes(["admin"]) == {"admin", "voice"}
    assert effective_scopes(["read"]) == {"read"}
    assert effective_scopes([]) == frozenset()
    assert set(effective_scopes(SCOPES)) == set(SCOPES)


def test_a_game_server_key_plays_but_cannot_administer_read_or_whisper() -> None:
    game = Grant(frozenset({"play"}))
    assert game.allows("chat") and game.allows("play")
    for scope in ("write", "read", "voice", "admin"):
        assert not game.allows(scope), scope


def test_a_world_limited_grant_reaches_only_its_worlds() -> None:
    limited = Grant(frozenset({"chat"}), frozenset({"town"}), player_id="p1")
    assert limited.reaches("town") and not limited.reaches("other")
    assert Grant(frozenset({"read"})).reaches("anything")
