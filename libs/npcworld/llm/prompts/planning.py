"""Prompts of planning: ``plan_day`` (outline), ``plan_hours`` (hour chunks), ``plan_actions`` (5-15 minute
actions with emoji and object state in the same call) and ``plan_reaction`` (continue or react)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from npcworld.llm.prompts.template import PromptTemplate

__all__ = [
    "PLAN_ACTIONS",
    "PLAN_DAY",
    "PLAN_HOURS",
    "PLAN_REACTION",
    "ActionProposal",
    "BlockProposal",
    "HourSlot",
    "Person",
    "PlanActionsInput",
    "PlanActionsOutput",
    "PlanDayInput",
    "PlanDayOutput",
    "PlanHoursInput",
    "PlanHoursOutput",
    "ReactionInput",
    "ReactionOutput",
]

_Clock = Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$", description="24-hour HH:MM")]
_Line = Annotated[str, Field(min_length=1, max_length=500)]
_STRICT = ConfigDict(frozen=True, extra="forbid")
_LENIENT = ConfigDict(frozen=True, extra="ignore")


class PlanDayInput(BaseModel):
    """The persona, yesterday in brief, the places the NPC knows, and what the plan must honour."""

    model_config = _STRICT
    npc_name: str = Field(min_length=1, max_length=200)
    persona: str = Field(min_length=1, max_length=2000, description="age, traits, occupation, lifestyle")
    date: str = Field(min_length=1, max_length=60)
    previous_day: str = Field(default="", max_length=2000)
    from_time: _Clock | None = Field(default=None, description="plan only from this time on (a revision)")
    places: tuple[_Line, ...] = Field(min_length=1, max_length=60)
    goals: tuple[_Line, ...] = Field(default=(), max_length=10)
    commitments: tuple[_Line, ...] = Field(default=(), max_length=10)
    canon: tuple[_Line, ...] = Field(default=(), max_length=100, description="designer canon: true facts")


class BlockProposal(BaseModel):
    """One block of the outline."""

    model_config = _LENIENT
    start: _Clock
    duration_minutes: int = Field(ge=5, le=16 * 60)
    description: _Line
    place: _Line


class PlanDayOutput(BaseModel):
    """When the NPC gets up and goes to bed, and the outline in 5-8 blocks (fewer for a revision)."""

    model_config = _LENIENT
    wake_up: _Clock
    bed_time: _Clock
    blocks: tuple[BlockProposal, ...] = Field(min_length=1, max_length=8)


class HourSlot(BaseModel):
    """An hour-long (or shorter) chunk of a block to name."""

    model_config = _STRICT
    start: _Clock
    minutes: int = Field(ge=1, le=60)
    block: _Line


class PlanHoursInput(BaseModel):
    """The day's chunks, in order, each with the block it belongs to."""

    model_config = _STRICT
    npc_name: str = Field(min_length=1, max_length=200)
    persona: str = Field(min_length=1, max_length=2000)
    slots: tuple[HourSlot, ...] = Field(min_length=1, max_length=40)


class PlanHoursOutput(BaseModel):
    """What the NPC does in each chunk, one line per slot, in order."""

    model_config = _LENIENT
    chunks: tuple[_Line, ...] = Field(min_length=1, max_length=40)


class PlanActionsInput(BaseModel):
    """The current chunk to decompose just in time, and the objects at its place."""

    model_config = _STRICT
    npc_name: str = Field(min_length=1, max_length=200)
    task: _Line
    start: _Clock
    minutes: int = Field(ge=1, le=60)
    place: _Line
    objects: tuple[_Line, ...] = Field(default=(), max_length=40)


class ActionProposal(BaseModel):
    """One 5-15 minute action, its emoji and the state it leaves an object in (if it uses one)."""

    model_config = _LENIENT
    description: _Line
    duration_minutes: int = Field(ge=1, le=60)
    emoji: str = Field(default="", max_length=16)
    object: str | None = Field(default=None, max_length=200)
    object_state: str | None = Field(default=None, max_length=400)


class PlanActionsOutput(BaseModel):
    """The chunk as consecutive actions."""

    model_config = _LENIENT
    actions: tuple[ActionProposal, ...] = Field(min_length=1, max_length=12)


class Person(BaseModel):
    """Another NPC the NPC could talk to."""

    model_config = _STRICT
    npc_id: str = Field(min_length=1, max_length=100)
    name: str = Field(min_length=1, max_length=200)


class ReactionInput(BaseModel):
    """A perception, what the NPC is doing, and the paper's two retrievals about the observed entity."""

    model_config = _STRICT
    npc_name: str = Field(min_length=1, max_length=200)
    persona: str = Field(min_length=1, max_length=2000)
    now: _Clock
    current_activity: _Line
    observation: str = Field(min_length=1, max_length=2000)
    relationship: tuple[str, ...] = Field(default=(), max_length=20, description="about the observed entity")
    activity: tuple[str, ...] = Field(default=(), max_length=20, description="about what it is doing")
    people: tuple[Person, ...] = Field(default=(), max_length=20)
    canon: tuple[_Line, ...] = Field(default=(), max_length=100, description="designer canon: true facts")


class ReactionOutput(BaseModel):
    """Continue (react false) or react: what to do, for how long, and whom to talk to if it is a talk."""

    model_config = _LENIENT
    react: bool
    reaction: str = Field(default="", max_length=500)
    duration_minutes: int = Field(default=15, ge=5, le=240)
    emoji: str = Field(default="", max_length=16)
    talk_to: str | None = Field(default=None, max_length=100)
    reason: str = Field(default="", max_length=500)


def _lines(items: tuple[str, ...], empty: str = "(none)") -> str:
    return "\n".join(f"- {i}" for i in items) if items else empty


def _check_day(inputs: PlanDayInput, output: PlanDayOutput) -> None:
    if inputs.from_time is None and not 5 <= len(output.blocks) <= 8:
        raise ValueError(f"a day outline has 5-8 blocks, got {len(output.blocks)}")


def _check_hours(inputs: PlanHoursInput, output: PlanHoursOutput) -> None:
    if len(output.chunks) != len(inputs.slots):
        raise ValueError(f"expected {len(inputs.slots)} chunks, got {len(output.chunks)}")


def _check_reaction(inputs: ReactionInput, output: ReactionOutput) -> None:
    if output.react and not output.reaction.strip():
        raise ValueError("a reaction needs a description")
    if output.talk_to is not None and output.talk_to not in {p.npc_id for p in inputs.people}:
        raise ValueError(f"talk_to {output.talk_to!r} is not one of the people listed")


_JSON_ONLY = "Answer with one JSON object only, "
PLAN_DAY: PromptTemplate[PlanDayInput, PlanDayOutput] = PromptTemplate(
    kind="plan_day", version=2,
    system=("You plan the day of a character in a simulated town, in the character's own habits. Give the "
            "time the character wakes up and goes to bed, and an outline of the waking day in 5 to 8 blocks "
            "(from the given time on only, when one is given). Use only the places listed. Work the goals "
            "and commitments into the plan at their times, and never plan against what is true in the "
            "world. " + _JSON_ONLY +
            '{"wake_up": "HH:MM", "bed_time": "HH:MM", "blocks": [{"start": "HH:MM", "duration_minutes": 60, '
            '"description": "...", "place": "<one of the places>"}]}.'),
    user=("{npc_name}: {persona}\nToday is {date}.{from_time}\nYesterday: {previous_day}\nPlaces {npc_name} "
          "knows:\n{places}\nGoals:\n{goals}\nCommitments:\n{commitments}\nTrue in this world:\n{canon}"),
    input_model=PlanDayInput, output_model=PlanDayOutput,
    fields=lambda i: {"npc_name": i.npc_name, "persona": i.persona, "date": i.date,
                      "from_time": f" Plan from {i.from_time} on." if i.from_time else "",
                      "previous_day": i.previous_day or "(nothing remembered)", "places": _lines(i.places),
                      "goals": _lines(i.goals), "commitments": _lines(i.commitments),
                      "canon": _lines(i.canon)},
    check=_check_day, temperature=0.5, max_tokens=900,
)
PLAN_HOURS: PromptTemplate[PlanHoursInput, PlanHoursOutput] = PromptTemplate(
    kind="plan_hours", version=1,
    system=("You break a character's day outline into hour-long chunks. For each numbered slot, say in a few "
            "words what the character does then, in keeping with the block it belongs to; do not repeat "
            "the same activity in consecutive slots unless it continues. " + _JSON_ONLY +
            '{"chunks": ["...", ...]} with one line per slot, in order.'),
    user="{npc_name}: {persona}\nSlots:\n{slots}",
    input_model=PlanHoursInput, output_model=PlanHoursOutput,
    fields=lambda i: {"npc_name": i.npc_name, "persona": i.persona,
                      "slots": "\n".join(f"{n}. {s.start} ({s.minutes} min), block: {s.block}"
                                         for n, s in enumerate(i.slots, start=1))},
    check=_check_hours, temperature=0.4, max_tokens=900,
)
PLAN_ACTIONS: PromptTemplate[PlanActionsInput, PlanActionsOutput] = PromptTemplate(
    kind="plan_actions", version=1,
    system=("You break a character's current task into consecutive actions of 5 to 15 minutes that fill the "
            "task's time. For each action give a short emoji summary and, when it uses one of the objects "
            "listed, the object's name and the state the action leaves it in. " + _JSON_ONLY +
            '{"actions": [{"description": "...", "duration_minutes": 10, "emoji": "...", '
            '"object": "<object or null>", "object_state": "<state or null>"}]}.'),
    user="{npc_name} at {place}, from {start} for {minutes} minutes: {task}\nObjects here:\n{objects}",
    input_model=PlanActionsInput, output_model=PlanActionsOutput,
    fields=lambda i: {"npc_name": i.npc_name, "place": i.place, "start": i.start, "minutes": str(i.minutes),
                      "task": i.task, "objects": _lines(i.objects)},
    temperature=0.4, max_tokens=700,
)
PLAN_REACTION: PromptTemplate[ReactionInput, ReactionOutput] = PromptTemplate(
    kind="plan_reaction", version=2,
    system=("You decide whether a character in a simulated town carries on with what they are doing or "
            "reacts to what they just noticed, given what they remember about the one they noticed and "
            "about what it is doing. A reaction may be talking to one of the people listed (give their id "
            "in talk_to). " + _JSON_ONLY +
            '{"react": true|false, "reaction": "...", "duration_minutes": 15, "emoji": "...", '
            '"talk_to": "<id or null>", "reason": "..."}.'),
    user=("{npc_name}: {persona}\nIt is {now}; {npc_name} is {current_activity}.\nObserved: {observation}\n"
          "What {npc_name} remembers about them:\n{relationship}\nAbout what they are doing:\n{activity}\n"
          "People here:\n{people}\nTrue in this world (whatever was observed):\n{canon}"),
    input_model=ReactionInput, output_model=ReactionOutput,
    fields=lambda i: {"npc_name": i.npc_name, "persona": i.persona, "now": i.now,
                      "current_activity": i.current_activity, "observation": i.observation,
                      "relationship": _lines(i.relationship), "activity": _lines(i.activity),
                      "people": _lines(tuple(f"{p.npc_id}: {p.name}" for p in i.people)),
                      "canon": _lines(i.canon)},
    check=_check_reaction, temperature=0.3, max_tokens=300,
)
