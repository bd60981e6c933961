"""Resolving places against the NPC's spatial memory: never an invented place, and the reason recorded."""

from __future__ import annotations

from services.planning.domain import KnownPlaces, resolve_place
from tests.unit.planning.support import CAFE, HALL, HOME, KITCHEN, MACHINE

KNOWN = KnownPlaces((CAFE, KITCHEN, MACHINE, HALL), HOME)


def test_a_known_path_resolves_to_itself() -> None:
    assert resolve_place(KITCHEN, KNOWN).path == KITCHEN
    assert resolve_place(KITCHEN, KNOWN).fallback is None


def test_a_readable_name_resolves_to_the_known_place_it_names() -> None:
    assert resolve_place("Lantern Cafe: kitchen", KNOWN).path == KITCHEN
    assert resolve_place("the town hall", KNOWN).path == HALL
    assert resolve_place("the coffee machine", KNOWN).path == MACHINE


def test_an_invented_place_falls_back_to_a_known_one_and_says_why() -> None:
    found = resolve_place("the moon base", KNOWN, near=CAFE)
    assert found.path == CAFE
    assert found.fallback is not None and "moon base" in found.fallback and CAFE in found.fallback
    assert resolve_place("Atlantis", KNOWN).path == HOME


def test_arenas_and_objects_of_the_known_places() -> None:
    assert set(KNOWN.arenas()) == {HOME, CAFE, KITCHEN, HALL}
    assert KNOWN.objects_in(CAFE) == (MACHINE,)
