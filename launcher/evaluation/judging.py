"""The LLM judge of the ablation ranking, used when an OpenAI-compatible endpoint is configured
(``OPENAI_BASE_URL``/``OPENAI_API_KEY``, docs/llm.md): it compares two interview answers to one question with
the NPC's ground truth at hand. A reply it cannot read falls back to the rule-based judgement."""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import combinations

from launcher.evaluation.grading import Grade, Question
from launcher.evaluation.rating import Judgement, judge_by_grades
from npcworld.llm.errors import LLMRequestError, ProviderUnavailableError
from npcworld.llm.openai_provider import OpenAIProvider
from npcworld.llm.prompts import Message
from npcworld.llm.settings import LLMSettings
from npcworld.llm.types import ChatParams

__all__ = ["LlmJudge"]

JUDGE_SYSTEM = (
    "You judge interview answers of characters in a simulated town. Given the question, the facts the "
    "character actually knows, and two answers A and B, say which answer is the more believable one: it "
    "states the facts, stays in character and invents nothing. Answer with one JSON object only: "
    '{"better": "A"} or {"better": "B"} or {"better": "tie"}.'
)
JUDGE_USER = (
    'Question: """{question}"""\nFacts:\n{facts}\nAnswer A: """{a}"""\nAnswer B: """{b}"""\nWhich is better?'
)


class LlmJudge:
    """Pairwise judgements from the configured endpoint (``readable`` and ``fallbacks`` count replies)."""

    def __init__(self, settings: LLMSettings) -> None:
        self.provider = OpenAIProvider(model=settings.llm_model, base_url=settings.openai_base_url,
                                       api_key=settings.openai_api_key, timeout_s=settings.llm_timeout_s)
        self.readable = 0
        self.fallbacks = 0

    async def judge(self, question: Question, answers: Mapping[str, str],
                    grades: Mapping[str, Grade]) -> list[Judgement]:
        """One judgement per pair of conditions (sorted names, as ``judge_by_grades``)."""
        fallback = {(j.a, j.b): j for j in judge_by_grades(grades)}
        found = []
        for a, b in combinations(sorted(answers), 2):
            better = await self._ask(question, answers[a], answers[b])
            if better is None:
                self.fallbacks += 1
                found.append(fallback[(a, b)])
            else:
                self.readable += 1
                found.append(Judgement(a, b, {"A": a, "B": b}.get(better)))
        return found

    async def _ask(self, question: Question, a: str, b: str) -> str | None:
        facts = "\n".join(f"- {f}" for f in question.expected[:10]) or "- (none)"
        user = JUDGE_USER.format(question=question.text, facts=facts, a=a, b=b)
        messages: list[Message] = [
            {"role": "system", "content": JUDGE_SYSTEM},
            {"role": "user", "content": user},
        ]
        params = ChatParams("eval_judge@1", 0.0, 20, {"type": "json_object"})
        try:
            reply = await self.provider.chat(messages, params)
            better = json.loads(reply.text).get("better")
        except (LLMRequestError, ProviderUnavailableError, ValueError, AttributeError):
            return None
        return better if better in ("A", "B", "tie") else None

    async def close(self) -> None:
        await self.provider.close()
