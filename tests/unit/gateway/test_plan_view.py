"""The gateway's plan view folds planning's events the way planning changes its plan."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from npcworld.contracts import ActionDecided, ObjectStateChange, PlanItem
from services.gateway.domain import plans

NINE = datetime(2023, 2, 14, 9, 0, tzinfo=UTC)


def _item(hour: float, minutes: int, what: str) -> dict[str, object]:
    return plans.item(PlanItem(start=NINE + timedelta(hours=hour - 9), duration_minutes=minutes,
                               description=what, location_path="w:Cafe:kitchen"))


def test_a_revision_keeps_what_came_before_it_and_cuts_the_item_in_progress_at_its_time() -> None:
    day = [_item(9, 60, "open the cafe"), _item(10, 120, "serve coffee"), _item(12, 60, "lunch")]
    revised = plans.replace_from(day, NINE + timedelta(minutes=90), [_item(10.5, 30, "run for mayor")])
    assert [(i["description"], i["minutes"]) for i in revised] == [
        ("open the cafe", 60), ("serve coffee", 30), ("run for mayor", 30)]


def test_the_waking_day_is_what_the_outline_covers() -> None:
    assert plans.window([_item(7, 60, "wake"), _item(8, 600, "work")]) == (
        NINE - timedelta(hours=2), NINE + timedelta(hours=9))
    assert plans.window([]) == (None, None)


def test_a_new_goal_comes_first_once_and_at_most_five_are_kept() -> None:
    goals: list[str] = []
    for g in ("a", "b", "c", "d", "e", "f", " b "):
        goals = plans.with_goal(goals, g)
    assert goals == ["b", "f", "e", "d", "c"]


def test_the_action_in_progress_is_the_decided_one() -> None:
    machine = "w:Cafe:kitchen:machine"
    decided = ActionDecided(description="brew coffee", location_path=machine, start=NINE, duration_minutes=10,
                            emoji="☕", object_state=ObjectStateChange(object_path=machine, state="brewing"))
    assert plans.action(decided) == {
        "item": {"start": NINE.isoformat(), "minutes": 10, "description": "brew coffee", "location": machine},
        "emoji": "☕", "object_path": machine, "object_state": "brewing", "reaction_to": None}
