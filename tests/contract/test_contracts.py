"""contracts/ is generated from the code: drift fails, and every event type survives the envelope."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npcworld.contracts import EVENT_TYPES, Envelope, decode_envelope
from npcworld.contracts.export import render_contracts
from npcworld.errors import PermanentError, UnknownEventError
from services.gateway.api import create_app
from tests.contract.examples import EXAMPLES

CONTRACTS = Path(__file__).resolve().parents[2] / "contracts"


def test_generated_contracts_match_the_code() -> None:
    files = render_contracts(create_app().openapi())
    stale = sorted(n for n, text in files.items() if (CONTRACTS / n).read_text() != text) if all(
        (CONTRACTS / n).exists() for n in files) else sorted(n for n in files if not (CONTRACTS / n).exists())
    assert not stale, f"run `npcworld contracts` to regenerate: {stale}"
    on_disk = {str(p.relative_to(CONTRACTS)) for p in CONTRACTS.rglob("*") if p.is_file()}
    assert on_disk == set(files), (
        f"files in contracts/ that the code no longer generates: {on_disk - set(files)}"
    )




def test_every_event_type_has_an_example() -> None:
    assert set(EXAMPLES) == set(EVENT_TYPES)


@pytest.mark.parametrize("event_type", sorted(EVENT_TYPES))
def test_every_event_type_round_trips_the_envelope(event_type: str) -> None:
    payload = EVENT_TYPES[event_type].model_validate(EXAMPLES[event_type])
    envelope = Envelope.new(payload, tenant_id="t", world_id="w", npc_id="n",
                            world_time=datetime(2023, 2, 14, 17, tzinfo=UTC))
    assert decode_envelope(envelope.to_json()) == envelope


@pytest.mark.parametrize("event_type", sorted(EVENT_TYPES))
def test_every_event_type_reads_back_from_its_stored_form(event_type: str) -> None:
    cls = EVENT_TYPES[event_type]
    payload = cls.model_validate(EXAMPLES[event_type])
    assert cls.model_validate(payload.stored()) == payload
    assert cls.model_validate_json(payload.stored_json()) == payload
    assert cls.filled(payload.stored()) == payload.model_dump(mode="json")


def test_the_log_leaves_out_fields_at_a_default_that_says_nothing_and_keeps_every_other() -> None:
    recorded = EVENT_TYPES["MemoryRecorded"](
        memory_id="m1", kind="observation", description="the stove is burning", importance=3,
        created_at=datetime(2023, 2, 14, 17, tzinfo=UTC), embedding_model="e")
    stored = recorded.stored()
    assert not {"told_by", "subject", "location", "depth", "evidence", "importance_model"} & set(stored)
    # "perceived"/"high" say something (an older event without them is read by its kind): a default that
    # could change is always written, as is a required field even at zero.
    assert (stored["source"], stored["trust"]) == ("perceived", "high")
    told = recorded.model_copy(update={"source": "told", "told_by": "player:p1", "trust": "low", "depth": 2})
    assert {"told_by": "player:p1", "depth": 2}.items() <= told.stored().items()
    tick = EVENT_TYPES["WorldTicked"](step=0, step_seconds=10.0)
    assert tick.stored() == {"step": 0, "step_seconds": 10.0}
    assert EVENT_TYPES["WorldTicked"].model_validate(tick.stored()) == tick


@settings(max_examples=50)
@given(version=st.integers(min_value=2, max_value=10**6))
def test_an_unknown_schema_version_is_refused_as_permanent(version: int) -> None:
    cls = EVENT_TYPES["WorldDeleted"]
    env = Envelope.new(cls(), tenant_id="t", world_id="w", world_time=datetime(2023, 2, 14, tzinfo=UTC))
    raw = env.to_json().replace(b'"schema_version":1', f'"schema_version":{version}'.encode())
    with pytest.raises(UnknownEventError, match=f"schema_version {version}"):
        decode_envelope(raw)


def test_a_payload_that_breaks_its_schema_is_refused_as_permanent() -> None:
    env = Envelope.new(EVENT_TYPES["ObservationMade"](description="saw a cat"), tenant_id="t", world_id="w",
                       npc_id=str(uuid.uuid4()), world_time=datetime(2023, 2, 14, tzinfo=UTC))
    raw = env.to_json().replace(b'"description":"saw a cat"', b'"description":""')
    with pytest.raises(PermanentError, match="description"):
        decode_envelope(raw)
