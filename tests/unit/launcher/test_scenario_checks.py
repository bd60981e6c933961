"""Evaluating scenario checks against what the backend answered: passes, failures and what they say."""

from __future__ import annotations

from typing import Any

from launcher.scenarios.checks import (
    MemorySeen,
    RelationshipSeen,
    check_memories,
    check_plan,
    check_relationship,
    check_reply,
    check_retrieval,
    describe,
    matches,
)
from launcher.scenarios.schema import MemoriesCheck, PlanCheck, RelationshipCheck, ReplyCheck, RetrievalCheck

STREAM = [
    MemorySeen("Marta said: the stove caught fire", 5, "chat"),
    MemorySeen("The stove in the kitchen caught  fire", 7, "observation"),
    MemorySeen("Tobias Wren ordered a coffee", 2, "observation"),
]


def _memories(**fields: Any) -> MemoriesCheck:
    return MemoriesCheck.model_validate({"memories": "marta", **fields})


def test_text_matches_ignore_case_and_whitespace_runs() -> None:
    assert matches("The stove  caught\nFIRE!", "stove caught fire")
    assert not matches("the stove", "stove caught fire")


def test_memories_contain_and_do_not_contain() -> None:
    assert check_memories(_memories(contains="stove in the kitchen caught fire"), STREAM).passed
    assert check_memories(_memories(contains=["coffee", "Tobias"], not_contains="flood"), STREAM).passed
    failed = check_memories(_memories(contains="bakery", not_contains="coffee"), STREAM)
    assert not failed.passed
    assert "no memory contains 'bakery'" in failed.message
    assert "a memory contains 'coffee': 'Tobias Wren ordered a coffee'" in failed.message
    assert "3 memories, newest first" in failed.message


def test_importance_at_least_counts_the_best_matching_memory_of_the_kind() -> None:
    assert check_memories(_memories(contains="caught fire", importance_at_least=7), STREAM).passed
    narrowed = check_memories(_memories(contains="caught fire", kind="chat", importance_at_least=7), STREAM)
    assert not narrowed.passed
    assert "have importance 5 (expected at least 7)" in narrowed.message


def test_retrieval_rank() -> None:
    ranked = ["Tobias Wren ordered a coffee", "The stove caught fire", "Marta opened the cafe"]
    check = RetrievalCheck.model_validate(
        {"retrieval": "marta", "query": "fire", "memory": "stove caught fire", "rank_at_most": 2})
    assert check_retrieval(check, ranked).passed
    first = check.model_copy(update={"rank_at_most": 1})
    message = check_retrieval(first, ranked).message
    assert message.startswith("'stove caught fire' ranked 2 (expected at most 1)")
    assert "not retrieved" in check_retrieval(check, ranked[:1]).message


def test_replies_plans_and_missing_ones() -> None:
    reply = ReplyCheck.model_validate({"reply": "morning", "contains": "fire", "not_contains": "cake"})
    assert check_reply(reply, "There was a fire in the kitchen.").passed
    assert check_reply(reply, "We baked a cake.").message == (
        "nothing contains 'fire'; found 'cake'. reply: 'We baked a cake.'")
    assert check_reply(reply, None).message == "chat 'morning' got no reply"
    plan = PlanCheck.model_validate({"plan": "marta", "contains": "Lantern Cafe"})
    assert check_plan(plan, ["open the Lantern Cafe", "sleep"]).passed
    assert check_plan(plan, None).message == "marta has no plan"


def test_relationship_thresholds_and_summary() -> None:
    check = RelationshipCheck.model_validate({"relationship": "sam", "with": "isabella",
                                              "familiarity_at_least": 2, "sentiment_at_most": 6,
                                              "contains": "party"})
    assert check_relationship(check, RelationshipSeen("isabella", 2, 5.5, "talked about the party")).passed
    failed = check_relationship(check, RelationshipSeen("isabella", 1, 7.0, "talked about coffee"))
    assert failed.message.startswith("familiarity 1 < 2; sentiment 7 > 6; nothing contains 'party'")
    assert check_relationship(check, None).message == "sam has no relationship with isabella"


def test_checks_get_readable_names_unless_named() -> None:
    assert describe(_memories(contains="fire", importance_at_least=4)) == (
        "memories of marta: contains 'fire', importance >= 4")
    assert describe(_memories(not_contains="flood", kind="chat")) == "chat memories of marta: not 'flood'"
    assert describe(_memories(contains="fire", name="remembers the fire")) == "remembers the fire"
