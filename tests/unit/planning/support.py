"""Shared builders for planning unit tests: a café owner with a few known places."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from services.planning.domain import KnownPlaces, NpcKey, Persona, PlannerState

W = "bh"
HOME = f"{W}:Quill House:bedroom"
CAFE = f"{W}:Lantern Cafe:counter"
KITCHEN = f"{W}:Lantern Cafe:kitchen"
MACHINE = f"{W}:Lantern Cafe:counter:coffee machine"
HALL = f"{W}:Town Hall:lobby"
MORNING = datetime(2023, 2, 14, 9, 0, 20, tzinfo=UTC)


def marta(**changes: Any) -> PlannerState:
    persona = Persona("Marta Quill", 34, ("warm", "organised"), "owner of the Lantern Cafe",
                      "Marta wakes up at 6 am; Marta runs the Lantern Cafe on Mill Street")
    state = PlannerState(NpcKey("t1", W, "marta"), persona, KnownPlaces((CAFE, KITCHEN, MACHINE, HALL), HOME))
    return replace(state, **changes)
