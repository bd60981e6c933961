"""Ablations are ranked with TrueSkill from pairwise judgements; the order is compared with the paper's."""

from __future__ import annotations

from launcher.evaluation.grading import Grade
from launcher.evaluation.rating import PAPER_ORDER, Judgement, judge_by_grades, matches_paper, placing, rank


def _g(score: float, hallucinated: bool = False) -> Grade:
    return Grade(score >= 1.0, score, hallucinated, ())


def test_the_judge_prefers_more_of_the_fact_then_an_answer_that_invents_nothing() -> None:
    judged = judge_by_grades({"full": _g(1.0), "none": _g(0.0), "no_reflection": _g(1.0, hallucinated=True)})
    assert judged == [
        Judgement("full", "no_reflection", "full"),
        Judgement("full", "none", "full"),
        Judgement("no_reflection", "none", "no_reflection"),
    ]
    assert judge_by_grades({"a": _g(0.5), "b": _g(0.5)}) == [Judgement("a", "b", None)]


def test_consistent_wins_rank_the_conditions_in_the_paper_order() -> None:
    order = list(PAPER_ORDER)
    one_question = [Judgement(a, b, a) for i, a in enumerate(order) for b in order[i + 1:]]
    ranking = rank(order, [one_question] * 5)
    assert [r.condition for r in ranking] == order
    assert matches_paper(ranking)
    assert ranking[0].mu > 25 > ranking[-1].mu and all(r.sigma < 25 / 3 for r in ranking)


def test_one_win_after_the_default_rating_moves_mu_as_trueskill_does() -> None:
    [winner, loser] = rank(["a", "b"], [[Judgement("a", "b", "a")]])
    # TrueSkill's published 1-vs-1 update from (25, 8.333): 29.396 / 20.604, sigma 7.171 each.
    assert (winner.condition, round(winner.mu, 3), round(winner.sigma, 3)) == ("a", 29.396, 7.171)
    assert (loser.condition, round(loser.mu, 3)) == ("b", 20.604)


def test_draws_only_leave_the_order_unproven() -> None:
    order = list(PAPER_ORDER)
    ranking = rank(order, [[Judgement(a, b, None) for i, a in enumerate(order) for b in order[i + 1:]]])
    assert not matches_paper(ranking)


def test_a_reversed_order_does_not_match_the_paper() -> None:
    order = list(PAPER_ORDER)
    judgements = [Judgement(a, b, b) for i, a in enumerate(order) for b in order[i + 1:]]
    assert [r.condition for r in rank(order, [judgements])] == order[::-1]
    assert not matches_paper(rank(order, [judgements]))


def test_a_question_places_the_conditions_by_wins_minus_losses() -> None:
    judged = judge_by_grades({"full": _g(1.0), "no_reflection": _g(1.0), "none": _g(0.0)})
    assert placing(judged) == {"full": 0, "no_reflection": 0, "none": 1}


def test_conditions_that_always_tie_end_with_the_same_rating_whatever_the_order_of_judging() -> None:
    grades = {"full": _g(1.0), "no_reflection": _g(1.0), "no_reflection_planning": _g(0.5), "none": _g(0.0)}
    ranking = rank(list(PAPER_ORDER), [judge_by_grades(grades)] * 4)
    mu = {r.condition: round(r.mu, 2) for r in ranking}
    assert mu["full"] == mu["no_reflection"] > mu["no_reflection_planning"] > mu["none"]
    assert [r.condition for r in ranking][:2] == ["full", "no_reflection"]  # a tie keeps the given order
    assert not matches_paper(ranking)  # a tie is not the paper's strict order
