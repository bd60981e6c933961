"""Scenario files: what parses, and problems reported with the file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.scenarios import ScenarioError, parse_scenario
from launcher.scenarios.schema import (
    Chat,
    ClockSteps,
    Expect,
    MemoriesCheck,
    Perceive,
    RelationshipCheck,
    ReplyCheck,
)

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "scenarios"
HEAD = """\
world:
  start_time: 2023-02-13T08:00:00Z
  places:
    - name: Lantern Cafe
      arenas: [{name: kitchen}]
npcs:
  - npc_id: marta
    name: Marta Quill
  - npc_id: sam
    name: Sam Moore
steps:
"""


def _problems(text: str) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, Path("s/fire.yaml"))
    return caught.value.problems


def test_the_example_scenarios_parse() -> None:
    files = sorted(EXAMPLES.glob("*.yaml"))
    assert files
    for path in files:
        scenario = parse_scenario(path.read_text(), path)
        assert scenario.steps and any(isinstance(s, Expect) for s in scenario.steps)


def test_steps_and_checks_parse_with_their_lines_and_defaults() -> None:
    scenario = parse_scenario(HEAD + """\
  - perceive: marta
    text: the stove caught fire
  - chat: marta
    text: What happened?
  - clock: 3
  - expect:
      - memories: marta
        contains: stove
        importance_at_least: 4
      - relationship: marta
        with: sam
        familiarity_at_least: 1
      - reply: chat-1
        not_contains: [cake, flood]
""", Path("s/fire.yaml"))
    perceive, chat, clock, expect = scenario.steps
    assert isinstance(perceive, Perceive) and perceive.text == "the stove caught fire" and perceive.at is None
    assert isinstance(chat, Chat) and chat.player == "player"
    assert isinstance(clock, ClockSteps) and clock.clock == 3 and clock.step_seconds == 10
    assert isinstance(expect, Expect) and scenario.lines == (12, 14, 16, 17)
    memories, relationship, reply = expect.checks
    assert isinstance(reply, ReplyCheck) and reply.not_contains == ("cake", "flood")
    assert isinstance(memories, MemoriesCheck) and memories.contains == ("stove",)
    assert isinstance(relationship, RelationshipCheck) and relationship.with_ == "sam"
    assert expect.lines == (18, 21, 24)
    assert scenario.world_id == "fire" and scenario.name == "fire"


def test_a_missing_field_names_the_line_and_field() -> None:
    problems = _problems(HEAD + "  - chat: marta\n    player: p1\n")
    assert problems == ["s/fire.yaml:12: steps[0].text: Field required"]


def test_every_problem_is_reported_at_once() -> None:
    problems = _problems(HEAD + """\
  - perceive: marta
    txt: typo
  - expect:
      - memories: marta
      - retrieval: marta
        query: fire
  - dance: marta
""")
    assert problems == [
        "s/fire.yaml:12: steps[0].text: Field required",
        "s/fire.yaml:13: steps[0].txt: Extra inputs are not permitted",
        "s/fire.yaml:15: steps[1].expect[0]: Value error, give contains and/or not_contains",
        "s/fire.yaml:16: steps[1].expect[1].memory: Field required",
        "s/fire.yaml:18: steps[2]: must be a mapping with exactly one of: perceive, chat, inner_voice, "
        "clock, expect",
    ]


def test_unknown_npcs_and_chats_and_a_clock_without_places_are_named() -> None:
    text = HEAD.replace("  places:\n    - name: Lantern Cafe\n      arenas: [{name: kitchen}]\n", "") + """\
  - chat: bob
    text: hi
  - clock: 2
  - expect:
      - reply: later
        contains: hi
      - relationship: marta
        with: tobias
"""
    assert _problems(text) == [
        "s/fire.yaml:9: steps[0].chat: no NPC 'bob' in npcs",
        "s/fire.yaml:11: steps[1].clock: the clock needs world.places or world.template",
        "s/fire.yaml:16: steps[2].expect[1].with: no NPC 'tobias' in npcs",
        "s/fire.yaml:13: steps[2].expect[0].reply: no chat named 'later' before this",
    ]


def test_bad_yaml_and_a_naive_start_time_are_refused() -> None:
    assert _problems("world: [unclosed\n")[0].startswith("s/fire.yaml:2: not valid YAML")
    problems = _problems(HEAD.replace("08:00:00Z", "08:00:00") + "  - clock: 1\n")
    assert problems == ["s/fire.yaml:2: world.start_time: Input should have timezone info"]


def test_a_template_world_may_name_its_own_npcs_but_not_also_places() -> None:
    text = ("world:\n  start_time: 2023-02-13T08:00:00Z\n  template: brindle-hollow\n"
            "steps:\n  - chat: isabella\n    text: hi\n")
    assert parse_scenario(text, Path("t.yaml")).world.template == "brindle-hollow"
    both = text.replace("brindle-hollow\n", "brindle-hollow\n  places: [{name: x, arenas: [{name: y}]}]\n")
    assert _problems(both) == ["s/fire.yaml:1: world: Value error, give either template or places, not both"]
