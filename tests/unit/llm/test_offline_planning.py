"""Offline planning puts NPCs among people: lunch out, an evening out unless reserved, hello to strangers."""

from __future__ import annotations

from npcworld.llm.offline import OfflineCognition
from npcworld.llm.prompts import get_prompt
from npcworld.llm.prompts.planning import Person, PlanDayInput, PlanDayOutput, ReactionInput, ReactionOutput

PLACES = (
    "Okafor house: kitchen",
    "Fenwick Hardware: shop floor",
    "Harbour Inn: bar",
    "Lantern Cafe: counter",
    "Lantern Cafe: cafe floor",
    "Riverside Park: riverbank",
    "Town Hall: council chamber",
)


def day(persona: str, name: str = "Kofi Okafor", date: str = "Monday 13 February 2023") -> PlanDayOutput:
    inputs = PlanDayInput(npc_name=name, persona=persona, date=date, places=PLACES)
    out = OfflineCognition().answer(get_prompt("plan_day"), inputs)
    assert isinstance(out, PlanDayOutput)
    return out


def test_lunch_is_eaten_out_and_an_outgoing_npc_spends_the_evening_among_people() -> None:
    plan = day("age 45; patient, handy; occupation: owner of Fenwick Hardware")
    blocks = {b.description: b.place for b in plan.blocks}
    assert blocks["morning: work as owner of Fenwick Hardware"] == "Fenwick Hardware: shop floor"
    assert blocks["have lunch"] in {"Harbour Inn: bar", "Lantern Cafe: cafe floor"}
    assert blocks["spend the evening out among people"] in {
        "Harbour Inn: bar",
        "Lantern Cafe: cafe floor",
        "Riverside Park: riverbank",
    }
    assert 5 <= len(plan.blocks) <= 8


def test_npcs_spread_over_the_places_to_eat_and_everyone_at_one_place_meets_in_one_area() -> None:
    names = [f"Resident {n}" for n in range(12)]
    lunches = {
        {b.description: b.place for b in day("age 30; occupation: clerk", name).blocks}["have lunch"]
        for name in names
    }
    assert lunches == {"Harbour Inn: bar", "Lantern Cafe: cafe floor"}


def test_a_reserved_npc_spends_the_evening_at_home() -> None:
    plan = day("age 27; curious, shy; occupation: painter")
    assert "spend the evening out among people" not in {b.description for b in plan.blocks}


def react(
    activity: str, persona: str = "age 40; cheerful", remembered: tuple[str, ...] = (),
    people: tuple[Person, ...] = (Person(npc_id="ines", name="Ines Varga"),),
) -> ReactionOutput:
    inputs = ReactionInput(
        npc_name="Kofi Okafor",
        persona=persona,
        now="12:10",
        current_activity=activity,
        observation="Ines Varga is having lunch",
        relationship=remembered,
        people=people,
    )
    out = OfflineCognition().answer(get_prompt("plan_reaction"), inputs)
    assert isinstance(out, ReactionOutput)
    return out


def test_out_among_people_an_npc_says_hello_to_a_stranger_but_not_at_work_or_when_reserved() -> None:
    assert react("have lunch").talk_to == "ines"
    assert react("spend the evening out among people").talk_to == "ines"
    assert not react("afternoon: work as owner of Fenwick Hardware").react
    assert not react("have lunch", persona="age 40; timid").react
    assert react("afternoon: work", remembered=("Ines Varga bought nails",)).talk_to == "ines"


HOST = ("age 34; warm, sociable; occupation: owner of the Lantern Cafe; Kofi Okafor is planning a birthday"
        " party at the Lantern Cafe on March 3 from 6 p.m. to 9 p.m.; Kofi wants everyone there")


def test_a_host_invites_someone_it_has_not_invited_yet_even_at_work() -> None:
    out = react("afternoon: work as owner of the Lantern Cafe", persona=HOST)
    assert out.talk_to == "ines" and "party" in out.reaction


def test_a_host_named_by_first_name_invites_but_not_while_inviting_someone_else() -> None:
    persona = "age 34; sociable; Kofi is planning a dinner at the Harbour Inn on June 2 at 7 pm"
    assert react("morning: work", persona=persona).talk_to == "ines"
    assert not react("invite Lars Berg to my dinner", persona=persona).react


def test_a_host_invites_the_next_person_when_it_remembers_telling_the_first() -> None:
    told = ('Kofi Okafor said to Ines Varga: "I am planning a birthday party at the Lantern Cafe. Would you'
            ' like to come?"',)
    out = react("afternoon: work as owner of the Lantern Cafe", persona=HOST, remembered=told,
                people=(Person(npc_id="ines", name="Ines Varga"), Person(npc_id="lars", name="Lars Berg")))
    assert out.talk_to == "lars" and "party" in out.reaction


def test_an_event_someone_else_hosts_or_without_a_time_makes_no_host() -> None:
    for persona in ("age 34; cheerful; Maren Holt is planning a party at the mill from 6 pm",
                    "age 34; cheerful; Kofi Okafor would like to have a party some day",
                    "age 34; shy; Kofi Okafor is planning a party at the mill from 6 pm"):
        assert not react("afternoon: work", persona=persona).react
