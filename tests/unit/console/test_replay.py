"""Replaying positions and actions from the log (the console's timeline), without services."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from services.gateway.console.replay import changes_of, places_of, short, state_at, tree_of

T0 = datetime(2023, 2, 13, 7, 0, tzinfo=UTC)
W = "town"


@dataclass(frozen=True)
class E:
    seq: int
    type: str
    npc_id: str | None
    world_time: datetime
    payload: dict[str, Any]


def _at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


LOG = [
    E(1, "NpcCreated", "ada", T0, {"npc_id": "ada", "name": "Ada", "location": f"{W}:home:bedroom"}),
    E(2, "NpcCreated", "bo", T0, {"npc_id": "bo", "name": "Bo", "location": f"{W}:home:kitchen"}),
    E(3, "ActionStarted", "ada", _at(10), {"description": "make coffee", "emoji": "☕",
                                           "arrived_at": None, "ends_at": "x"}),
    E(4, "NpcsMoved", None, _at(10), {"moves": [
        {"npc_id": "ada", "path": f"{W}:home:kitchen", "tile": [3, 4]},
        {"npc_id": "bo", "path": f"{W}:cafe:floor", "tile": [9, 9]}]}),
    E(5, "WorldTicked", None, _at(20), {"step": 2}),
    E(6, "ActionStarted", "bo", _at(20), {"description": "serve the first customers of the morning rush",
                                          "emoji": "🍰", "arrived_at": f"{W}:cafe:counter"}),
    E(7, "NpcsMoved", "ada", _at(30), {"moves": [{"npc_id": "ada", "path": f"{W}:cafe:floor"}]}),
]
NAMES = {"ada": "Ada", "bo": "Bo"}


def test_the_state_at_a_time_has_every_change_up_to_it_and_none_after() -> None:
    changes = changes_of(LOG)
    start = state_at(NAMES, changes, T0)
    assert (start["ada"].path, start["ada"].description) == (f"{W}:home:bedroom", "")
    at10 = state_at(NAMES, changes, _at(10))
    assert (at10["ada"].path, at10["ada"].tile, at10["ada"].emoji) == (f"{W}:home:kitchen", (3, 4), "☕")
    assert at10["ada"].description == "make coffee" and at10["ada"].since == _at(10)
    assert at10["bo"].path == f"{W}:cafe:floor" and at10["bo"].description == ""
    at25 = state_at(NAMES, changes, _at(25))
    assert at25["bo"].path == f"{W}:cafe:counter" and at25["bo"].tile is None  # arrived: a place, no tile
    end = state_at(NAMES, changes)
    assert end["ada"].path == f"{W}:cafe:floor" and end["ada"].description == "make coffee"


def test_changes_keep_log_order_and_ignore_other_events() -> None:
    changes = changes_of(reversed(LOG))
    assert [c.seq for c in changes] == [1, 2, 3, 4, 4, 6, 7]
    assert changes[3].as_json() == {"seq": 4, "t": int(_at(10).timestamp() * 1000), "npc": "ada",
                                    "path": f"{W}:home:kitchen", "tile": [3, 4]}


def test_a_window_starts_from_the_state_before_it() -> None:
    changes = changes_of(LOG)
    opening = state_at(NAMES, [c for c in changes if c.at <= _at(10)])
    later = [c for c in changes if c.at > _at(10)]
    assert state_at(NAMES, later, None, opening) == state_at(NAMES, changes)
    assert "carl" not in state_at(NAMES, [*later, *changes_of([E(9, "NpcsMoved", None, _at(40), {
        "moves": [{"npc_id": "carl", "path": f"{W}:x:y"}]})])])  # an NPC not of the world is left out


def test_the_place_tree_puts_each_npc_in_its_arena() -> None:
    places = places_of(W, [{"name": "home", "arenas": [{"name": "bedroom", "area": [0, 0, 4, 2]},
                                                        {"name": "kitchen"}]},
                           {"name": "cafe", "arenas": [{"name": "floor"}, {"name": "counter"}]}])
    assert places[0].centre() == (2, 1) and places[1].centre() is None
    tree = dict(tree_of(places, state_at(NAMES, changes_of(LOG), _at(25)).values()))
    assert [(p.arena, [f.npc_id for f in here]) for p, here in tree["cafe"]] == [("floor", []),
                                                                                 ("counter", ["bo"])]
    assert [f.npc_id for f in tree["home"][1][1]] == ["ada"]
    with_object = state_at(NAMES, changes_of([*LOG, E(8, "NpcsMoved", None, _at(40), {
        "moves": [{"npc_id": "ada", "path": f"{W}:home:bedroom:bed"}]})]))
    assert [f.npc_id for f in dict(tree_of(places, with_object.values()))["home"][0][1]] == ["ada"]


def test_the_short_summary_is_the_emoji_and_a_clipped_description() -> None:
    bo = state_at(NAMES, changes_of(LOG))["bo"]
    assert short(bo, 20) == "🍰 serve the first cus…"
    assert short(state_at(NAMES, [])["ada"]) == ""
