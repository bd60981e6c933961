"""Retrieval scoring: recency decay, min-max normalisation, weights, ties and the threshold bounds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.memory.domain import (
    Candidate,
    RetrievalWeights,
    StreamStats,
    cosine,
    prior,
    prior_thresholds,
    recency,
    reference_top_k,
    score_candidates,
    stream_stats,
)

NOW = datetime(2023, 2, 14, 12, tzinfo=UTC)


def test_recency_decays_by_0_995_per_world_hour_since_last_access() -> None:
    assert recency(NOW, NOW) == 1.0
    assert recency(NOW, NOW - timedelta(hours=1)) == pytest.approx(0.995)
    assert recency(NOW, NOW - timedelta(hours=24)) == pytest.approx(0.995**24)


def test_an_access_later_than_now_counts_as_just_accessed() -> None:
    assert recency(NOW, NOW + timedelta(hours=5)) == 1.0


def test_each_component_is_min_max_normalised_over_the_stream() -> None:
    candidates = [
        Candidate("a", 10, NOW, 0.9),
        Candidate("b", 1, NOW - timedelta(hours=48), -0.1),
        Candidate("c", 5, NOW - timedelta(hours=24), 0.4),
    ]
    top = score_candidates(candidates, stream_stats(candidates), NOW, RetrievalWeights(), 3)
    by_id = {s.memory_id: s for s in top}
    assert (by_id["a"].recency, by_id["a"].importance, by_id["a"].relevance) == (1.0, 1.0, 1.0)
    assert (by_id["b"].recency, by_id["b"].importance, by_id["b"].relevance) == (0.0, 0.0, 0.0)
    assert by_id["c"].importance == pytest.approx(4 / 9)
    assert by_id["c"].relevance == pytest.approx(0.5)
    assert [s.memory_id for s in top] == ["a", "c", "b"]


def test_a_component_that_is_equal_across_the_stream_scores_one_half() -> None:
    candidates = [Candidate("a", 3, NOW, 0.2), Candidate("b", 3, NOW, 0.7)]
    top = score_candidates(candidates, stream_stats(candidates), NOW, RetrievalWeights(), 2)
    assert all(s.importance == 0.5 and s.recency == 0.5 for s in top)


def test_weights_scale_each_component() -> None:
    candidates = [
        Candidate("old-important", 10, NOW - timedelta(days=30), 0.0),
        Candidate("new-trivial", 1, NOW, 0.0),
    ]
    stats = stream_stats(candidates)
    assert score_candidates(candidates, stats, NOW, RetrievalWeights(importance=2.0), 1)[0].memory_id == (
        "old-important"
    )
    assert (
        score_candidates(candidates, stats, NOW, RetrievalWeights(recency=2.0), 1)[0].memory_id
        == "new-trivial"
    )


def test_equal_scores_are_ordered_by_memory_id() -> None:
    candidates = [Candidate(mid, 5, NOW, 0.5) for mid in ("c", "a", "b")]
    top = score_candidates(candidates, stream_stats(candidates), NOW, RetrievalWeights(), 3)
    assert [s.memory_id for s in top] == ["a", "b", "c"]


def test_reference_ranks_the_memory_most_similar_to_the_query_first_when_only_relevance_counts() -> None:
    memories = [("far", 5, NOW, (0.0, 1.0)), ("near", 5, NOW, (1.0, 0.1)), ("mid", 5, NOW, (1.0, 1.0))]
    top = reference_top_k(memories, (1.0, 0.0), NOW, 3, RetrievalWeights(recency=0, importance=0))
    assert [s.memory_id for s in top] == ["near", "mid", "far"]
    assert cosine((1.0, 0.0), (0.0, 0.0)) == 0.0


accessed = st.integers(0, 2000).map(lambda h: NOW - timedelta(hours=h))


@given(
    rows=st.lists(st.tuples(st.integers(1, 10), accessed), min_size=1, max_size=60),
    needed=st.floats(-0.5, 2.5),
    weights=st.tuples(st.sampled_from([0.0, 0.5, 1.0, 3.0]), st.sampled_from([0.0, 1.0, 2.0])),
)
def test_every_memory_whose_prior_reaches_the_bound_lies_in_its_levels_range(
    rows: list[tuple[int, datetime]], needed: float, weights: tuple[float, float]
) -> None:
    w = RetrievalWeights(recency=weights[0], importance=weights[1])
    stats = StreamStats(float(min(i for i, _ in rows)), float(max(i for i, _ in rows)),
                        min(t for _, t in rows), max(t for _, t in rows), 0.0, 1.0)
    since = prior_thresholds(stats, NOW, w, needed)
    for imp, at in rows:
        if prior(imp, at, stats, NOW, w) >= needed:
            assert imp in since
            start = since[imp]
            assert start is None or at >= start
