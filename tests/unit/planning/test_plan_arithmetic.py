"""Plan arithmetic: outlines cover the waking day without gaps, overlaps or repeated items; hour chunks;
5-15 minute actions; revisions and promises keep the day covered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.planning.domain import (
    ACTION_MAX_MINUTES,
    ACTION_MIN_MINUTES,
    Item,
    fit_actions,
    hour_slots,
    insert_item,
    name_chunks,
    normalise,
    plan_problems,
    replace_from,
)

DAY = datetime(2023, 2, 14, tzinfo=UTC)
WAKE, BED = DAY.replace(hour=7), DAY.replace(hour=23)
HOME, CAFE = "w:Quill House:bedroom", "w:Lantern Cafe:counter"
IDLE = Item(WAKE, 1, "free time", HOME)


def at(hour: int, minute: int = 0) -> datetime:
    return DAY.replace(hour=hour, minute=minute)


def item(hour: int, minute: int, minutes: int, text: str, where: str = CAFE) -> Item:
    return Item(at(hour, minute), minutes, text, where)


def test_lunch_proposed_at_12_1230_and_1_becomes_one_lunch() -> None:
    proposal = [item(7, 0, 300, "open the cafe"), item(12, 0, 60, "have lunch"),
                item(12, 30, 60, "lunch"), item(13, 0, 60, "eat lunch at the cafe"),
                item(14, 0, 540, "serve customers")]
    plan = normalise(proposal, WAKE, BED, IDLE)
    lunches = [i for i in plan if "lunch" in i.description]
    assert len(lunches) == 1
    assert (lunches[0].start, lunches[0].end) == (at(12), at(14))
    assert plan_problems(plan, WAKE, BED) == []


def test_raw_repeated_lunch_is_reported_as_a_problem() -> None:
    raw = [item(7, 0, 300, "work"), item(12, 0, 30, "have lunch"), item(12, 30, 30, "have lunch"),
           item(13, 0, 600, "work again")]
    assert any("repeats" in p for p in plan_problems(raw, WAKE, BED))


def test_overlapping_and_gapped_outline_covers_the_waking_day_exactly() -> None:
    proposal = [item(9, 0, 120, "bake bread"), item(10, 0, 60, "serve breakfast"),  # overlap
                item(13, 0, 60, "do the accounts"),                                 # gap 11-13
                item(21, 0, 300, "read a book", HOME)]                              # runs past bed
    plan = normalise(proposal, WAKE, BED, IDLE)
    assert plan[0] == Item(WAKE, 120, "free time", HOME)  # nothing planned before 9 -> idle at home
    assert plan_problems(plan, WAKE, BED) == []
    assert plan[-1].end == BED
    assert sum(i.minutes for i in plan) == 16 * 60


def test_an_empty_outline_is_a_day_of_free_time_at_home() -> None:
    assert normalise([], WAKE, BED, IDLE) == [Item(WAKE, 16 * 60, "free time", HOME)]


def test_hour_chunks_are_at_most_an_hour_and_end_on_the_hour() -> None:
    outline = normalise([item(7, 30, 150, "paint the river"), item(10, 0, 45, "walk home", HOME),
                         item(10, 45, 735, "rest", HOME)], WAKE, BED, IDLE)
    chunks = hour_slots(outline)
    assert all(1 <= c.minutes <= 60 for c in chunks)
    assert all("repeats" in p for p in plan_problems(chunks, WAKE, BED))  # named later, by plan_hours
    painting = [c for c in chunks if c.description == "paint the river"]
    assert [(c.start, c.minutes) for c in painting] == [(at(7, 30), 30), (at(8), 60), (at(9), 60)]


def test_named_chunks_never_read_the_same_twice_in_a_row() -> None:
    outline = normalise([item(7, 0, 960, "serve customers")], WAKE, BED, IDLE)
    chunks = name_chunks(hour_slots(outline), ["serve customers"] * 16)
    assert len(chunks) == 16
    assert plan_problems(chunks, WAKE, BED) == []


def test_actions_fill_a_chunk_exactly_in_5_to_15_minute_steps() -> None:
    chunk = item(8, 0, 60, "run the morning rush")
    proposals = [("grind coffee", 3), ("brew coffee", 40), ("serve", 10), ("wipe the counter", 12)]
    actions = [a for a, _ in fit_actions(chunk, proposals)]
    assert actions[0].start == chunk.start and actions[-1].end == chunk.end
    assert all(ACTION_MIN_MINUTES <= a.minutes <= ACTION_MAX_MINUTES for a in actions)
    assert plan_problems(actions, chunk.start, chunk.end) == []


def test_too_few_proposed_actions_are_stretched_in_steps_not_one_long_action() -> None:
    chunk = item(8, 0, 50, "paint")
    actions = [a for a, _ in fit_actions(chunk, [("mix paints", 10)])]
    assert sum(a.minutes for a in actions) == 50
    assert all(ACTION_MIN_MINUTES <= a.minutes <= ACTION_MAX_MINUTES for a in actions)


def test_a_revision_keeps_the_past_cuts_the_item_in_progress_and_appends_the_new_rest() -> None:
    plan = normalise([item(7, 0, 300, "work"), item(12, 0, 660, "rest", HOME)], WAKE, BED, IDLE)
    new = [item(10, 20, 15, "put out the fire"), Item(at(10, 35), 745, "work", CAFE)]
    revised = replace_from(plan, at(10, 20), new)
    assert revised[0] == Item(WAKE, 200, "work", CAFE)
    assert plan_problems(revised, WAKE, BED) == []


def test_a_promise_is_inserted_at_its_time_and_the_day_stays_covered() -> None:
    plan = normalise([item(7, 0, 600, "serve customers"), item(17, 0, 360, "relax", HOME)], WAKE, BED, IDLE)
    promise = item(17, 0, 60, "meet Tobias at the cafe")
    merged = insert_item(plan, promise)
    assert promise in merged
    assert plan_problems(merged, WAKE, BED) == []
    assert next(i for i in merged if i.description == "relax").start == at(18)


def test_a_promise_in_the_middle_of_a_block_splits_it_around_the_promise() -> None:
    plan = [Item(WAKE, 16 * 60, "serve customers", CAFE)]
    merged = insert_item(plan, item(15, 0, 30, "call the supplier"))
    assert [(i.start, i.description) for i in merged] == [
        (WAKE, "serve customers"), (at(15), "call the supplier"), (at(15, 30), "serve customers")]
    assert merged[-1].end == BED and sum(i.minutes for i in merged) == 16 * 60
    assert WAKE + timedelta(minutes=merged[0].minutes) == at(15)


def test_the_same_action_proposed_twice_in_a_row_is_not_a_duplicate_item() -> None:
    chunk = item(8, 0, 30, "serve")
    actions = [a for a, _ in fit_actions(chunk, [("serve a latte", 15), ("serve a latte", 15)])]
    assert plan_problems(actions, chunk.start, chunk.end) == []
