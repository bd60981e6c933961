"""Generated towns: the same seed gives the same town; every resident has a home and a workplace that exist
and can be walked to; names are distinct; the two stories are planted; the template loader accepts them."""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import pytest
from click.testing import CliRunner

from launcher.cli import main
from launcher.simulation.metrics import acquaintances_from_seeds, mentions
from npcworld.templates import Template, load_template, template_exists
from npcworld.templates.generator import generate_town, generated_name
from services.world_state.domain import WorldTree


def _reachable(rows: tuple[str, ...], start: tuple[int, int]) -> set[tuple[int, int]]:
    seen, todo = {start}, deque([start])
    while todo:
        x, y = todo.popleft()
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            inside = 0 <= ny < len(rows) and 0 <= nx < len(rows[0])
            if inside and rows[ny][nx] != "#" and (nx, ny) not in seen:
                seen.add((nx, ny))
                todo.append((nx, ny))
    return seen


def test_the_same_seed_gives_the_same_town_and_another_seed_another() -> None:
    assert generate_town(120, 5) == generate_town(120, 5)
    other = generate_town(120, 6)
    assert other["npcs"] != generate_town(120, 5)["npcs"]
    assert json.loads(json.dumps(other)) == other  # plain JSON, as written by `npcworld template generate`


@pytest.mark.parametrize("npcs", [25, 250])
def test_every_resident_has_a_home_and_a_workplace_that_exist_and_every_place_is_walkable(npcs: int) -> None:
    town = load_template(generated_name(npcs, 3))
    assert len(town.npcs) == npcs
    tree = WorldTree.from_definition("w", town.definition("t"))
    assert tree.grid is not None
    homes = {s.name for s in town.sectors if s.arenas[0].name == "kitchen" and s.arenas[1].name == "bedroom"}
    residents: dict[str, int] = {}
    for npc in town.personas("w"):
        assert npc.location is not None and npc.occupation is not None
        home = npc.location.split(":")[1]
        assert home in homes and npc.known_places[0] == f"w:{home}:kitchen"
        residents[home] = residents.get(home, 0) + 1
        workplace = npc.occupation.split(" at ", 1)[-1].split(" of ", 1)[-1].split(" for ", 1)[-1]
        assert any(p.startswith(f"w:{workplace}:") for p in npc.known_places), npc.occupation
        assert all(tree.knows(p) for p in npc.known_places)
    assert set(residents) == homes and max(residents.values()) <= 5  # households, not one crowded house
    assert len(homes) >= npcs / 5 and len(town.sectors) - len(homes) - 1 >= npcs / 8
    first_home = tree.target_tile(town.personas("w")[0].location or "")
    assert first_home is not None
    walkable = _reachable(town.tile_map().rows, first_home)
    for arena in tree.arenas:
        assert tree.target_tile(arena) in walkable, arena


def test_residents_have_distinct_names_and_personas_with_routines_and_relationships() -> None:
    town = generate_town(1000, 11)
    npcs = town["npcs"]
    assert len({n["name"] for n in npcs}) == len({n["npc_id"] for n in npcs}) == 1000
    assert len({(n["age"], tuple(n["traits"]), n["occupation"]) for n in npcs}) > 900
    assert min(n["age"] for n in npcs) >= 18 and len({n["occupation"] for n in npcs}) > 100
    assert all("wakes up at" in n["seed"] and "goes to bed at" in n["seed"] for n in npcs)
    small = generate_town(150, 11)["npcs"]  # the report's acquaintance check is quadratic
    names = {n["npc_id"]: n["name"] for n in small}
    knows = acquaintances_from_seeds(names, {n["npc_id"]: n["seed"] for n in small})
    mutual = {(a, b) for a, b in knows if (b, a) in knows}
    assert {a for a, _ in mutual} == set(names)  # everyone knows someone who knows them back


@pytest.mark.parametrize("npcs", [25, 400])
def test_only_the_host_knows_of_the_party_and_only_the_candidate_of_the_candidacy(npcs: int) -> None:
    town = Template.model_validate(generate_town(npcs, 8))
    party, candidacy = town.stories["party"], town.stories["candidacy"]
    seeds = {n.npc_id: n.seed for n in town.npcs}
    assert [n for n, s in seeds.items() if mentions(s, party["keywords"])] == [party["host"]]
    assert [n for n, s in seeds.items() if mentions(s, candidacy["keywords"])] == [candidacy["candidate"]]
    assert f"party at {party['place']} on February 14 from 5 pm to 7 pm" in seeds[party["host"]]
    assert party["place"] in {s.name for s in town.sectors}
    assert all(any(p.startswith(f"{party['place']}:") for p in n.known_places) for n in town.npcs)
    assert party["host"] != candidacy["candidate"]


def test_the_largest_town_fits_the_map_limits() -> None:
    town = generate_town(10_000, 1)
    assert len(town["npcs"]) == 10_000 and town["width"] <= 1000 and town["height"] <= 1000
    assert len({n["npc_id"] for n in town["npcs"]}) == 10_000
    with pytest.raises(ValueError):
        generate_town(10_001, 1)


def test_a_generated_towns_name_is_a_template_name_and_the_command_writes_that_town(tmp_path: Path) -> None:
    assert template_exists("town-25-4") and template_exists("brindle-hollow")
    assert not template_exists("town-24-4") and not template_exists("town-25")
    out = tmp_path / "town.json"
    args = ["template", "generate", "--npcs", "25", "--seed", "4", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "town-25-4" in result.output
    assert Template.model_validate(json.loads(out.read_text())) == load_template("town-25-4")
