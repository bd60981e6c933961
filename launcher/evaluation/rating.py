"""The paper's ablations and their ranking: pairwise judgements of interview answers (the rule-based judge
here) rated with TrueSkill, and whether the order found is the paper's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise

import trueskill

from launcher.evaluation.grading import Grade
from npcworld.contracts.world import Ablation

__all__ = [
    "CONDITIONS",
    "PAPER_ORDER",
    "Judgement",
    "Rating",
    "judge_by_grades",
    "matches_paper",
    "placing",
    "rank",
]

# Condition → WorldCreated.ablations. The paper's ablated architectures, best first (its Figure 8).
CONDITIONS: dict[str, tuple[Ablation, ...]] = {
    "full": (),
    "no_reflection": ("reflection",),
    "no_reflection_planning": ("reflection", "planning"),
    "none": ("observation", "reflection", "planning"),
}
PAPER_ORDER: tuple[str, ...] = ("full", "no_reflection", "no_reflection_planning", "none")
# mu equal to this many decimals is a tie: TrueSkill's free-for-all update is not exactly symmetric in the
# order of the teams, so conditions that always tie differ in the fifth decimal or so.
_TIE_DIGITS = 2


@dataclass(frozen=True)
class Judgement:
    """Which of two conditions answered one question better; ``winner`` None: a draw."""

    a: str
    b: str
    winner: str | None


@dataclass(frozen=True)
class Rating:
    """A condition's TrueSkill rating after all judgements (the paper reports mu and sigma)."""

    condition: str
    mu: float
    sigma: float


def judge_by_grades(grades: Mapping[str, Grade]) -> list[Judgement]:
    """The rule-based judge for one question answered by each condition: the answer stating more of the
    expected fact wins; at equal recall, one that asserts nothing unperceived beats one that does."""
    found = []
    for a, b in combinations(sorted(grades), 2):
        key_a, key_b = _merit(grades[a]), _merit(grades[b])
        found.append(Judgement(a, b, a if key_a > key_b else b if key_b > key_a else None))
    return found


def _merit(g: Grade) -> tuple[float, int]:
    return (round(g.score, 6), 0 if g.hallucinated else 1)


def placing(judgements: Sequence[Judgement]) -> dict[str, int]:
    """One question's pairwise judgements as a ranking (0 best; equal places for a tie): by wins minus
    losses (Copeland), as the paper's evaluators ranked every condition's answer to a question."""
    points: dict[str, int] = {}
    for j in judgements:
        points.setdefault(j.a, 0)
        points.setdefault(j.b, 0)
        if j.winner is not None:
            points[j.winner] += 1
            points[j.b if j.winner == j.a else j.a] -= 1
    levels = sorted(set(points.values()), reverse=True)
    return {c: levels.index(p) for c, p in points.items()}


def rank(conditions: Sequence[str], rounds: Sequence[Sequence[Judgement]]) -> list[Rating]:
    """TrueSkill ratings (mu 25, sigma 25/3, the paper's set-up): each round (one question's judgements) is
    one match of every condition in it, placed by ``placing``, so conditions that always tie end equal (to
    ``_TIE_DIGITS`` decimals).
    Best first by mu, equal mu in ``conditions`` order."""
    env = trueskill.TrueSkill(draw_probability=0.1)
    ratings = {c: env.create_rating() for c in conditions}
    for judgements in rounds:
        places = placing(judgements)
        if len(places) < 2:
            continue
        teams = sorted(places)
        rated = env.rate([(ratings[c],) for c in teams], ranks=[places[c] for c in teams])
        for c, (r,) in zip(teams, rated, strict=True):
            ratings[c] = r
    order = sorted(conditions, key=lambda c: (-round(ratings[c].mu, _TIE_DIGITS), list(conditions).index(c)))
    return [Rating(c, float(ratings[c].mu), float(ratings[c].sigma)) for c in order]


def matches_paper(ranking: Sequence[Rating]) -> bool:
    """Whether the conditions rank as the paper's (strictly: equal mu, to 2 decimals, does not match)."""
    by_name = {r.condition: round(r.mu, _TIE_DIGITS) for r in ranking}
    present = [c for c in PAPER_ORDER if c in by_name]
    return len(present) > 1 and all(by_name[x] > by_name[y] for x, y in pairwise(present))
