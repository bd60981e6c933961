"""The prompt registry, rendering, output cross-checks and the request hash."""

from __future__ import annotations

import pytest

from npcworld.errors import ValidationError
from npcworld.llm import prepare, request_hash
from npcworld.llm.prompts import (
    PROMPTS,
    ImportanceBatchInput,
    ImportanceBatchOutput,
    ImportanceInput,
    ImportanceOutput,
    ReflectionInsightsOutput,
    ReflectionQuestionsOutput,
    get_prompt,
)
from npcworld.llm.structured import InvalidOutputError, parse_output, response_format


def test_registry_lists_each_kind_once_with_a_version() -> None:
    assert {"importance", "reflection_questions", "reflection_insights", "plan_day"} <= set(PROMPTS)
    for kind, template in PROMPTS.items():
        assert template.kind == kind
        assert template.version >= 1
        assert template.key == f"{kind}@v{template.version}"
        assert "JSON" in template.system  # json_object mode needs the word in the prompt


def test_unknown_kind_and_wrong_output_model_are_refused() -> None:
    with pytest.raises(KeyError, match="unknown prompt kind"):
        get_prompt("no_such_kind")
    with pytest.raises(TypeError, match="importance@v1 answers ImportanceOutput"):
        get_prompt("importance", ReflectionQuestionsOutput)


def test_importance_renders_numbered_memories() -> None:
    template = get_prompt("importance")
    messages = template.render(ImportanceInput(npc_name="Isabella", memories=("a walk", "a party")))
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "1. a walk\n2. a party" in messages[1]["content"]


def test_output_must_have_one_score_per_memory() -> None:
    template = get_prompt("importance")
    inputs = ImportanceInput(npc_name="Isabella", memories=("a", "b"))
    assert parse_output(template, inputs, '{"scores": [1, 9]}') == ImportanceOutput(scores=(1, 9))
    with pytest.raises(InvalidOutputError, match="expected 2 scores"):
        parse_output(template, inputs, '{"scores": [1]}')
    with pytest.raises(InvalidOutputError, match="schema mismatch"):
        parse_output(template, inputs, '{"scores": [0, 11]}')


def test_importance_batch_renders_each_character_with_its_memories_and_checks_every_list() -> None:
    template = get_prompt("importance_batch")
    inputs = ImportanceBatchInput(people=(
        ImportanceInput(npc_name="Isabella", memories=("a walk", "a party")),
        ImportanceInput(npc_name="Klaus", memories=("a book",)),
    ))
    user = template.render(inputs)[1]["content"]
    assert "Character: Isabella\nMemories (2):\n1. a walk\n2. a party" in user
    assert "Character: Klaus\nMemories (1):\n1. a book" in user
    parsed = parse_output(template, inputs, '{"scores": [[2, 8], [3]]}')
    assert parsed == ImportanceBatchOutput(scores=((2, 8), (3,)))
    with pytest.raises(InvalidOutputError, match="expected 2 scores for Isabella"):
        parse_output(template, inputs, '{"scores": [[2], [3]]}')
    with pytest.raises(InvalidOutputError, match="expected 2 lists"):
        parse_output(template, inputs, '{"scores": [[2, 8]]}')


def test_importance_batch_refuses_one_character_twice_and_too_many_memories() -> None:
    one = ImportanceInput(npc_name="Isabella", memories=("a",))
    with pytest.raises(ValueError, match="each character appears once"):
        ImportanceBatchInput(people=(one, one))
    many = tuple(ImportanceInput(npc_name=f"N{i}", memories=tuple(f"m{j}" for j in range(30)))
                 for i in range(4))
    with pytest.raises(ValueError, match="at most 100 memories"):
        ImportanceBatchInput(people=many)
    crowd = tuple(ImportanceInput(npc_name=f"N{i}", memories=("m",)) for i in range(100))
    assert len(ImportanceBatchInput(people=crowd).people) == 100  # a hundred NPCs with one memory each


def test_insight_evidence_must_point_at_shown_memories() -> None:
    call = prepare(
        "reflection_insights",
        {"npc_name": "K", "question": "q?", "memories": [{"id": "m1", "description": "x"}]},
        ReflectionInsightsOutput,
        model="m",
        parameters={},
    )
    with pytest.raises(InvalidOutputError, match="not shown"):
        parse_output(call.template, call.inputs, '{"insights": [{"text": "abc", "evidence": [2]}]}')


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"scores": [4]}\n```',
        'Sure! Here it is: {"scores": [4]} Hope it helps.',
        ' {"scores": [4.0]} ',
    ],
)
def test_json_is_found_in_fences_and_chatter(text: str) -> None:
    template = get_prompt("importance")
    inputs = ImportanceInput(npc_name="I", memories=("a",))
    assert parse_output(template, inputs, text) == ImportanceOutput(scores=(4,))


@pytest.mark.parametrize("text", ["", "not json", '{"scores": [4', "[4]"])
def test_non_json_is_invalid(text: str) -> None:
    template = get_prompt("importance")
    with pytest.raises(InvalidOutputError):
        parse_output(template, ImportanceInput(npc_name="I", memories=("a",)), text)


def test_request_hash_is_stable_and_covers_every_part() -> None:
    messages = [{"role": "user", "content": "hi"}]
    base = request_hash("importance@v1", "m", {"temperature": 0.0}, messages)
    assert base == request_hash("importance@v1", "m", {"temperature": 0.0}, [dict(messages[0])])
    assert (
        len(
            {
                base,
                request_hash("importance@v2", "m", {"temperature": 0.0}, messages),
                request_hash("importance@v1", "m2", {"temperature": 0.0}, messages),
                request_hash("importance@v1", "m", {"temperature": 0.5}, messages),
                request_hash(
                    "importance@v1", "m", {"temperature": 0.0}, [{"role": "user", "content": "hi!"}]
                ),
            }
        )
        == 5
    )


def test_bad_inputs_name_the_field() -> None:
    with pytest.raises(ValidationError) as info:
        prepare("importance", {"npc_name": "I", "memories": []}, ImportanceOutput, model="m", parameters={})
    assert info.value.field == "memories"


def test_response_formats() -> None:
    template = get_prompt("importance")
    assert response_format(template, "json_object") == {"type": "json_object"}
    schema = response_format(template, "json_schema")
    assert schema is not None and schema["json_schema"]["name"] == "importance"
    assert "scores" in schema["json_schema"]["schema"]["properties"]
    assert response_format(template, "none") is None
