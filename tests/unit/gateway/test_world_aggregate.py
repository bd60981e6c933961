"""The world aggregate decides commands from its folded history."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from npcworld.contracts import NpcCreated, NpcPersonaChanged, NpcRetired, WorldCreated, WorldDeleted
from npcworld.errors import ConflictError, NotFoundError, ValidationError
from services.gateway.domain import decide_add_npc, decide_change_persona, decide_delete, decide_retire, fold

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


def test_a_persona_edit_changes_only_the_fields_given_and_an_edit_that_changes_nothing_is_no_event() -> None:
    state = fold([WorldCreated(name="w", start_time=T0), MARTA.model_copy(update={"occupation": "baker"})])
    (edit,) = decide_change_persona(state, "w", "marta", {"age": 34, "traits": ["warm"]})
    assert edit == NpcPersonaChanged(npc_id="marta", name="Marta Quill", age=34, traits=("warm",),
                                     occupation="baker")
    edited = fold([WorldCreated(name="w", start_time=T0), MARTA, edit])
    assert edited.npcs["marta"].age == 34 and edited.npcs["marta"].seed == MARTA.seed
    assert decide_change_persona(edited, "w", "marta", {"age": 34}) == []
    with pytest.raises(NotFoundError):
        decide_change_persona(edited, "w", "nobody", {"age": 3})


def test_a_retired_npc_is_counted_out_takes_no_edits_and_retiring_it_again_is_no_event() -> None:
    state = fold([WorldCreated(name="w", start_time=T0), MARTA])
    retire = decide_retire(state, "w", "marta", "moved away")
    assert retire == [NpcRetired(npc_id="marta", reason="moved away")]
    retired = fold([WorldCreated(name="w", start_time=T0), MARTA, NpcRetired(npc_id="marta")])
    assert retired.active_npcs == 0 and "marta" in retired.npcs
    assert decide_retire(retired, "w", "marta", "") == []
    with pytest.raises(ConflictError) as err:
        decide_change_persona(retired, "w", "marta", {"age": 3})
    assert err.value.field == "npc_id"
