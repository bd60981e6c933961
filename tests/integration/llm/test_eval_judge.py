"""With an OpenAI-compatible endpoint configured, ``npcworld eval`` ranks the ablations from the endpoint's
pairwise judgements (the fake server stands in for it); a reply it cannot read falls back to the rule-based
judgement, and the judge is named in the report."""

from __future__ import annotations

import re
from typing import Any

import pytest

from launcher.evaluation.grading import Knowledge, Question, grade
from launcher.evaluation.interviews import Answer
from launcher.evaluation.rating import PAPER_ORDER
from launcher.evaluation.runner import rank_answers
from npcworld.llm.testing import FakeOpenAIServer
from npcworld.llm.testing.replies import Reply, structured_responder

FACT = "Marta is planning a Valentine's Day party at the Lantern Cafe"
# What each condition's NPC says: the fuller its memory, the more of the fact.
REPLIES = {
    "full": "Marta is planning a Valentine's Day party at the Lantern Cafe.",
    "no_reflection": "Marta is planning a party at the cafe.",
    "no_reflection_planning": "Marta mentioned a party.",
    "none": "I don't know anything about that.",
}


def _word_judge(body: dict[str, Any], prompt: str) -> Reply:
    """A judge that prefers the answer sharing more words with the facts (eval_judge only)."""
    if not prompt.startswith("eval_judge@"):
        return structured_responder(body, prompt)
    user = body["messages"][1]["content"]
    facts = set(re.findall(r"\w+", user.split("Answer A:")[0].split("Facts:")[1].lower()))
    a, b = re.findall(r'Answer [AB]: """(.*?)"""', user, re.S)
    overlap = [len(facts & set(re.findall(r"\w+", x.lower()))) for x in (a, b)]
    better = "A" if overlap[0] > overlap[1] else "B" if overlap[1] > overlap[0] else "tie"
    return Reply.json({"better": better})


def _answers(n_questions: int) -> list[Answer]:
    found = []
    for i in range(n_questions):
        q = Question("marta", "memory", f"What is Marta planning? ({i})", (FACT,))
        for condition, reply in REPLIES.items():
            found.append(Answer(condition, q, reply, grade(q, reply, Knowledge((FACT,)), "Marta Quill")))
    return found


async def test_the_endpoint_judges_each_pair_and_the_ranking_follows_its_judgements(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeOpenAIServer(responder=_word_judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("LLM_MODEL", "fake-judge")
        server.enqueue(Reply.text("not a verdict"))  # the first pair: unreadable, judged by the rules
        ranked = await rank_answers(_answers(3), list(PAPER_ORDER))
    judged = [r for r in server.requests if r.prompt == "eval_judge@1"]
    assert len(judged) == 3 * 6  # every pair of the four conditions, for each question
    first = judged[0].body["messages"][1]["content"]  # the pair (full, no_reflection), facts at hand
    assert FACT in first and REPLIES["full"] in first and REPLIES["no_reflection"] in first
    assert ranked["judge"] == "llm (fake-judge)"
    assert ranked["judgements"] == 18 and ranked["llm_fallbacks"] == 1
    assert [r["condition"] for r in ranked["ranking"]] == list(PAPER_ORDER)
    assert ranked["matches_paper"] is True
