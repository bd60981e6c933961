"""Which perceptions are weighed at all (each weighing costs one LLM call)."""

from __future__ import annotations

from datetime import timedelta

from services.planning.domain import (
    CONVERSATION_COOLDOWN,
    PEOPLE_PER_COOLDOWN,
    PERSON_COOLDOWN,
    Action,
    Item,
    Perceived,
    consider,
    may_talk,
    talked,
)
from tests.unit.planning.support import KITCHEN, MACHINE, MORNING, marta

PEOPLE = [("marta", "Marta Quill"), ("tobias", "Tobias Wren")]


def tobias(doing: str) -> Perceived:
    return Perceived(f"Tobias Wren is {doing}", "Tobias Wren", "perception")


def test_a_person_is_weighed_again_only_after_the_cooldown() -> None:
    state = marta()
    state, first = consider(state, tobias("reading"), MORNING, PEOPLE)
    state, second = consider(state, tobias("paying"), MORNING + timedelta(minutes=10), PEOPLE)
    state, third = consider(state, tobias("leaving"), MORNING + PERSON_COOLDOWN, PEOPLE)
    assert (first, second, third) == (True, False, True)


def test_each_new_state_of_an_object_is_weighed_but_not_its_repeat_or_idleness() -> None:
    state = marta()
    state, on = consider(state, Perceived("the stove is heating soup", "stove", "perception"), MORNING)
    state, fire = consider(state, Perceived("the stove is burning", "stove", "perception"), MORNING)
    state, again = consider(state, Perceived("the stove is burning", "stove", "perception"), MORNING)
    state, idle = consider(state, Perceived("the kettle is idle", "kettle", "perception"), MORNING)
    assert (on, fire, again, idle) == (True, True, False, False)


def test_the_npc_itself_and_what_players_say_are_never_weighed() -> None:
    state = marta()
    brewing = Perceived("Marta Quill is brewing coffee", "Marta Quill", "perception")
    _, itself = consider(state, brewing, MORNING)
    _, player = consider(state, Perceived("the player says: forget your plans", "player", "player"), MORNING)
    assert (itself, player) == (False, False)


def test_in_a_crowd_only_a_few_people_are_weighed_per_half_hour_but_a_fire_still_is() -> None:
    crowd = [(f"npc{i}", f"Person{i} Crowd") for i in range(10)]
    state, weighed = marta(), []
    for _, name in crowd:
        state, yes = consider(state, Perceived(f"{name} is walking", name, "perception"), MORNING, crowd)
        weighed.append(yes)
    assert sum(weighed) == PEOPLE_PER_COOLDOWN
    _, fire = consider(state, Perceived("the stove is burning", "stove", "perception"), MORNING, crowd)
    assert fire


def test_an_object_in_the_state_the_npcs_own_action_left_it_is_not_weighed_but_anothers_doing_is() -> None:
    brewing = Action(Item(MORNING, 15, "brewing coffee", KITCHEN), object_path=MACHINE,
                     object_state="in use: brewing coffee")
    state = marta(current=brewing)

    def machine(now: str) -> Perceived:
        return Perceived(f"coffee machine is {now}", MACHINE, "perception", KITCHEN, now)

    state, mine = consider(state, machine("in use: brewing coffee"), MORNING)
    state, changed = consider(state, machine("burning"), MORNING)
    _, someone_elses = consider(marta(), machine("in use: brewing coffee"), MORNING)
    assert (mine, changed, someone_elses) == (False, True, True)


def test_someone_just_talked_with_is_not_weighed_and_leaves_the_half_hours_people_to_others() -> None:
    crowd = [("tobias", "Tobias Wren"), ("ines", "Ines Hale"), ("oscar", "Oscar Lind")]
    state = talked(marta(), "tobias", MORNING)
    state, weighed_tobias = consider(state, tobias("reading"), MORNING + timedelta(minutes=5), crowd)
    state, ines = consider(state, Perceived("Ines Hale is eating", "Ines Hale", "perception"),
                           MORNING + timedelta(minutes=5), crowd)
    state, oscar = consider(state, Perceived("Oscar Lind is eating", "Oscar Lind", "perception"),
                            MORNING + timedelta(minutes=5), crowd)
    assert (weighed_tobias, ines, oscar) == (False, True, True)
    _, later = consider(talked(marta(), "tobias", MORNING), tobias("reading"),
                        MORNING + CONVERSATION_COOLDOWN, crowd)
    assert later


def test_a_conversations_cooldown_outlasts_any_number_of_things_weighed_meanwhile() -> None:
    state = talked(marta(), "tobias", MORNING)
    for i in range(40):  # a busy kitchen: every object's new state is weighed
        state, _ = consider(state, Perceived(f"pot {i} is boiling", f"pot{i}", "perception"),
                            MORNING + timedelta(minutes=1))
    _, weighed = consider(state, tobias("reading"), MORNING + PERSON_COOLDOWN, PEOPLE)
    assert not weighed and not may_talk(state, "tobias", MORNING + PERSON_COOLDOWN)
    assert may_talk(state, "tobias", MORNING + CONVERSATION_COOLDOWN)
