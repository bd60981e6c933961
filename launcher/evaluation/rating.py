"""The paper's ablations and their ranking: pairwise judgements of interview answers (the rule-based judge
here) rated with TrueSkill, and whether the order found is the paper's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise

import trueskill

from launcher.evaluation.grading import Grade

__all__ = [
    "CONDITIONS",
    "PAPER_ORDER",
    "Judgement",
    "Rating",
    "judge_by_grades",
    "matches_paper",
    "rank",
]

# Condition → WorldCreated.ablations. The paper's ablated architectures, best first (its Figure 8).
CONDITIONS: dict[str, tuple[str, ...]] = {
    "full": (),
    "no_reflection": ("reflection",),
    "no_reflection_planning": ("reflection", "planning"),
    "none": ("observation", "reflection", "planning"),
}
PAPER_ORDER: tuple[str, ...] = ("full", "no_reflection", "no_reflection_planning", "none")


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


def rank(conditions: Sequence[str], judgements: Sequence[Judgement]) -> list[Rating]:
    """TrueSkill ratings (mu 25, sigma 25/3, the paper's set-up) updated by each judgement in order, a draw
    as a draw; best first by mu, ties in ``conditions`` order."""
    env = trueskill.TrueSkill(draw_probability=0.1)
    ratings = {c: env.create_rating() for c in conditions}
    for j in judgements:
        ranks = [0, 0] if j.winner is None else [0, 1] if j.winner == j.a else [1, 0]
        (ratings[j.a],), (ratings[j.b],) = env.rate([(ratings[j.a],), (ratings[j.b],)], ranks=ranks)
    order = sorted(conditions, key=lambda c: (-round(ratings[c].mu, 9), list(conditions).index(c)))
    return [Rating(c, float(ratings[c].mu), float(ratings[c].sigma)) for c in order]


def matches_paper(ranking: Sequence[Rating]) -> bool:
    """Whether the conditions rank as the paper's (strictly: a tie in mu does not match)."""
    by_name = {r.condition: r.mu for r in ranking}
    present = [c for c in PAPER_ORDER if c in by_name]
    return len(present) > 1 and all(by_name[x] > by_name[y] for x, y in pairwise(present))
