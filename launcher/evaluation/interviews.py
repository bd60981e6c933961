"""Interviews through the public API (``POST /v1/worlds/{id}/npcs/{npc}/interview``): the same questions put
to the same NPC in every condition's world, each answer graded against that world's ground truth."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from launcher.evaluation.grading import CATEGORIES, Grade, Question, grade
from launcher.evaluation.questions import NpcTruth, knowledge_of
from launcher.evaluation.worlds import reply_to

__all__ = ["Answer", "ask_all", "summarise"]

INTERVIEWER = "a researcher from the university, interviewing the residents of the town"
_CONCURRENCY = 4
Tick = Callable[[int, int], None]


@dataclass(frozen=True)
class Answer:
    """One answer of one condition's NPC to one question, and its grade."""

    condition: str
    question: Question
    reply: str
    grade: Grade


async def _interview(client: httpx.AsyncClient, world_id: str, q: Question) -> str:
    body = {"interviewer": INTERVIEWER, "question": q.text, "wait": True, "timeout_s": 60}
    return await reply_to(client, f"/v1/worlds/{world_id}/npcs/{q.npc_id}", "interview", body)


async def ask_all(client: httpx.AsyncClient, worlds: Mapping[str, str], questions: Sequence[Question],
                  truths: Mapping[str, Mapping[str, NpcTruth]], tick: Tick) -> list[Answer]:
    """Every question to its NPC in every condition's world (``worlds``: condition → world id), graded
    against that world's truth (``truths``: condition → NPC id → truth); in question order."""
    gate = asyncio.Semaphore(_CONCURRENCY)
    total, done = len(questions) * len(worlds), 0

    async def one(condition: str, q: Question) -> Answer:
        nonlocal done
        async with gate:
            reply = await _interview(client, worlds[condition], q)
        truth = truths[condition][q.npc_id]
        done += 1
        tick(done, total)
        return Answer(condition, q, reply, grade(q, reply, knowledge_of(truth), truth.name))

    return list(await asyncio.gather(*(one(c, q) for q in questions for c in worlds)))


def summarise(answers: Sequence[Answer], condition: str) -> dict[str, Any]:
    """Accuracy per category and the hallucination share of one condition's answers."""
    mine = [a for a in answers if a.condition == condition]
    per: dict[str, Any] = {}
    for category in CATEGORIES:
        graded = [a.grade for a in mine if a.question.category == category]
        per[category] = {"questions": len(graded), "correct": sum(g.correct for g in graded),
                         "accuracy": (sum(g.correct for g in graded) / len(graded)) if graded else None}
    return {
        "answers": len(mine),
        "accuracy": (sum(a.grade.correct for a in mine) / len(mine)) if mine else None,
        "categories": per,
        "hallucinated": sum(a.grade.hallucinated for a in mine),
        "hallucination_rate": (sum(a.grade.hallucinated for a in mine) / len(mine)) if mine else None,
    }
