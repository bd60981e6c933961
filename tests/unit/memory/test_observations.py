"""Duplicate-observation suppression and seed splitting."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.memory.domain import PreviousObservation, is_duplicate, persona_summary, split_seed, state_key

AT = datetime(2023, 2, 13, 9, tzinfo=UTC)
DAY = timedelta(hours=24)


def test_the_same_state_seen_again_within_the_window_is_a_duplicate() -> None:
    previous = PreviousObservation("The stove is idle.", AT - timedelta(minutes=10))
    assert is_duplicate("the stove is  idle", AT, previous, DAY)


def test_a_changed_state_is_not_a_duplicate() -> None:
    previous = PreviousObservation("the stove is idle", AT - timedelta(minutes=10))
    assert not is_duplicate("the stove is burning", AT, previous, DAY)


def test_the_same_state_after_the_window_is_remembered_again() -> None:
    previous = PreviousObservation("the stove is idle", AT - timedelta(hours=25))
    assert not is_duplicate("the stove is idle", AT, previous, DAY)


def test_a_first_observation_is_never_a_duplicate() -> None:
    assert not is_duplicate("the stove is idle", AT, None, DAY)


def test_state_key_names_the_entity_and_place_not_the_state() -> None:
    assert state_key("stove is idle", "Stove", "kitchen") == state_key("stove is burning", "stove", "Kitchen")
    assert state_key("stove is idle", "stove", "cafe") != state_key("stove is idle", "stove", "kitchen")
    assert state_key("It is raining.", None, None) == state_key("it is raining", None, None)


def test_seed_is_split_on_semicolons_into_distinct_trimmed_parts() -> None:
    seed = "Isabella runs Hobbs Cafe; she loves parties ;; she loves parties; she plans a party on Feb 14 "
    assert split_seed(seed) == [
        "Isabella runs Hobbs Cafe",
        "she loves parties",
        "she plans a party on Feb 14",
    ]
    assert split_seed("  ;  ") == []


def test_persona_summary_reads_like_an_identity_line() -> None:
    assert persona_summary("Isabella", 34, ("friendly", "warm"), "cafe owner") == (
        "Isabella (age 34), cafe owner; friendly, warm"
    )
    assert persona_summary("Sam", None, (), None) == "Sam"
