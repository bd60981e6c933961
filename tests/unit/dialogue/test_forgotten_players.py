"""A forgotten player, as the dialogue service sees it: its relationships go, and a line of it that arrives
late is neither answered nor remembered."""

from __future__ import annotations

from npcworld.contracts import PlayerSpoke
from npcworld.contracts.players import PlayerForgotten
from tests.unit.dialogue.test_handlers import World, setup


async def test_player_forgotten_drops_every_relationship_with_that_player_only() -> None:
    w = World()
    await setup(w)
    for player in ("p1", "p2"):
        await w.handle(w.envelope(PlayerSpoke(player_id=player, text="Hello there!"), "isabella"))
    assert {k[3] for k in w.repo.relationships} >= {"player:p1", "player:p2"}
    await w.handle(w.envelope(PlayerForgotten(player_id="p1"), "isabella"))
    assert "player:p1" not in {k[3] for k in w.repo.relationships}
    assert "player:p2" in {k[3] for k in w.repo.relationships}


async def test_a_line_of_a_player_forgotten_since_gets_no_reply_and_no_relationship() -> None:
    w = World()
    await setup(w)
    w.repo.forgotten.add((w.tenant, "p1"))
    assert await w.handle(w.envelope(PlayerSpoke(player_id="p1", text="Remember me?"), "isabella")) == []
    assert "player:p1" not in {k[3] for k in w.repo.relationships}
