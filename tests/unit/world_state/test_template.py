"""The Brindle Hollow template: 25 personas with the paper's two stories, every place known and reachable."""

from __future__ import annotations

from npcworld.templates import list_templates, load_template
from services.world_state.domain import WorldTree, find_path


def test_the_demo_town_has_25_npcs_and_the_two_stories() -> None:
    assert "brindle-hollow" in list_templates()
    town = load_template("brindle-hollow")
    npcs = {n.npc_id: n for n in town.npcs}
    assert len(npcs) == 25
    assert "Valentine's Day party at the Lantern Cafe on February 14 from 5 pm to 7 pm" in npcs["marta"].seed
    assert "running for mayor" in npcs["tobias"].seed
    assert all(";" in n.seed for n in town.npcs)  # several seed memories each
    assert [n for n in npcs if "party" in npcs[n].seed.lower()] == ["marta"]
    assert [n for n in npcs if "mayor" in npcs[n].seed.lower()] == ["tobias"]


def test_every_home_and_known_place_exists_and_every_arena_is_reachable_from_every_home() -> None:
    town = load_template("brindle-hollow")
    tree = WorldTree.from_definition("w", town.definition("brindle-hollow"))
    assert tree.grid is not None
    homes = set()
    for npc in town.personas("w"):
        assert npc.location is not None and tree.knows(npc.location)
        assert all(tree.knows(p) for p in npc.known_places)
        homes.add(tree.target_tile(npc.location))
    for arena in tree.arenas:
        goal = tree.target_tile(arena)
        assert goal is not None
        for home in homes:
            assert home is not None and find_path(tree.grid, home, goal), (arena, home)
