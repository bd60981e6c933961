"""Which importance ratings share one call: a world's memories of one moment, within the call's size."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.memory.domain import NpcRef, RatingContext, shared_calls

T0 = datetime(2023, 2, 13, 7, tzinfo=UTC)


def context(npc: str, *, world: str = "w", at: datetime = T0) -> RatingContext:
    return RatingContext(NpcRef("t", world, npc), npc.title(), "", at)


def test_one_moment_of_one_world_is_one_call() -> None:
    requests = [(context("ann"), 3), (context("bob"), 2), (context("cy"), 4)]
    assert shared_calls(requests, per_npc=50, per_call=100) == [[0, 1, 2]]


def test_other_worlds_and_other_moments_are_other_calls() -> None:
    later = T0 + timedelta(seconds=10)
    requests = [(context("ann"), 1), (context("bob", world="v"), 1), (context("cy", at=later), 1),
                (context("dee"), 1)]
    assert shared_calls(requests, per_npc=50, per_call=100) == [[0, 3], [1], [2]]


def test_a_full_call_starts_another_and_a_large_batch_goes_alone() -> None:
    requests = [(context("ann"), 40), (context("bob"), 40), (context("cy"), 30), (context("dee"), 60),
                (context("eve"), 10)]
    assert shared_calls(requests, per_npc=50, per_call=100) == [[0, 1], [2, 4], [3]]


def test_two_characters_of_the_same_name_never_share_a_call() -> None:
    twin = RatingContext(NpcRef("t", "w", "ann-2"), "Ann", "", T0)
    requests = [(context("ann"), 1), (twin, 1), (context("bob"), 1)]
    assert shared_calls(requests, per_npc=50, per_call=100) == [[0], [1, 2]]
