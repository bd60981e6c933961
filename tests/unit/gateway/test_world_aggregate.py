"""The world aggregate decides commands from its folded history."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from npcworld.contracts import NpcCreated, WorldCreated, WorldDeleted
from npcworld.errors import NotFoundError, ValidationError
from services.gateway.domain import decide_add_npc, decide_delete, fold

T0 = datetime(2023, 2, 13, 7, tzinfo=UTC)
MARTA = NpcCreated(npc_id="marta", name="Marta Quill")


def test_an_npc_joins_a_live_world_once() -> None:
    state = fold([WorldCreated(name="w", start_time=T0)])
    assert decide_add_npc(state, "w", MARTA) == [MARTA]
    with pytest.raises(ValidationError) as err:
        decide_add_npc(fold([WorldCreated(name="w", start_time=T0), MARTA]), "w", MARTA)
    assert err.value.field == "npc_id"


def test_a_deleted_or_unknown_world_accepts_no_commands() -> None:
    deleted = fold([WorldCreated(name="w", start_time=T0), WorldDeleted()])
    for state in (deleted, fold([])):
        with pytest.raises(NotFoundError):
            decide_add_npc(state, "w", MARTA)
        with pytest.raises(NotFoundError):
            decide_delete(state, "w")


def test_the_folded_version_counts_every_event_for_optimistic_concurrency() -> None:
    assert fold([WorldCreated(name="w", start_time=T0), MARTA]).version == 2
