"""The scenario file: a world, its NPCs and steps (perceive, chat, inner_voice, clock, expect), read from YAML
with every problem reported as ``file:line: field: message``.

Each step and each check is a mapping whose first key says what it is (``chat: marta``, ``memories: marta``)
and whose other keys are its parameters; see docs/studio-controls.md for the format.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from npcworld.contracts import SectorDef

__all__ = [
    "Chat",
    "Check",
    "ClockSteps",
    "Expect",
    "InnerVoice",
    "MemoriesCheck",
    "NpcSpec",
    "Perceive",
    "PlanCheck",
    "RelationshipCheck",
    "ReplyCheck",
    "RetrievalCheck",
    "Scenario",
    "ScenarioError",
    "Step",
    "WorldSpec",
    "load_scenario",
    "parse_scenario",
]

_ID = r"^[A-Za-z0-9_.-]{1,100}$"


def _texts(value: object) -> object:
    return (value,) if isinstance(value, str) else value


Texts = Annotated[tuple[Annotated[str, Field(min_length=1)], ...], BeforeValidator(_texts)]
Line = Annotated[str, Field(min_length=1, max_length=2000)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class WorldSpec(_Strict):
    """The fresh world: from a template, or inline places (sectors → arenas → objects) and the NPCs below."""

    id: str | None = Field(default=None, pattern=_ID)
    name: str | None = Field(default=None, min_length=1, max_length=200)
    start_time: AwareDatetime
    template: str | None = Field(default=None, min_length=1, max_length=100)
    places: tuple[SectorDef, ...] = ()

    @model_validator(mode="after")
    def _one_source(self) -> WorldSpec:
        if self.template is not None and self.places:
            raise ValueError("give either template or places, not both")
        return self


class NpcSpec(_Strict):
    npc_id: str = Field(pattern=_ID)
    name: str = Field(min_length=1, max_length=200)
    age: int | None = Field(default=None, ge=0, le=1000)
    traits: tuple[str, ...] = ()
    occupation: str | None = None
    seed: str = Field(default="", max_length=10000, description="persona paragraph; ';' separates memories")
    location: str | None = Field(default=None, description="sector:arena[:object], inside this world")


class Perceive(_Strict):
    perceive: str = Field(description="the NPC")
    text: Line
    at: AwareDatetime | None = Field(default=None, description="world time (default: the clock's)")
    location: str | None = None


class Chat(_Strict):
    chat: str = Field(description="the NPC")
    text: Line
    player: str = Field(default="player", pattern=r"^[A-Za-z0-9_.:@-]+$")
    name: str | None = Field(default=None, description="what ``reply:`` checks call this chat")


class InnerVoice(_Strict):
    inner_voice: str = Field(description="the NPC")
    directive: Line


class ClockSteps(_Strict):
    clock: int = Field(ge=1, le=10_000, description="steps to run the world clock (stepped mode)")
    step_seconds: float = Field(default=10.0, gt=0, le=86400)


class _Check(_Strict):
    name: str | None = Field(default=None, description="the test case's name (default: made from the check)")


class _Text(_Check):
    contains: Texts = ()
    not_contains: Texts = ()


class MemoriesCheck(_Text):
    memories: str = Field(description="the NPC")
    kind: Literal["observation", "reflection", "plan", "conversation", "chat"] | None = None
    importance_at_least: int | None = Field(default=None, ge=1, le=10)

    @model_validator(mode="after")
    def _says_something(self) -> MemoriesCheck:
        if not (self.contains or self.not_contains):
            raise ValueError("give contains and/or not_contains")
        if self.importance_at_least is not None and not self.contains:
            raise ValueError("importance_at_least applies to the memories that match contains")
        return self


class RetrievalCheck(_Check):
    retrieval: str = Field(description="the NPC")
    query: Line
    memory: Line = Field(description="text of the memory expected among the retrieved")
    rank_at_most: int = Field(default=1, ge=1, le=100)


class ReplyCheck(_Text):
    reply: str = Field(description="the chat's name (its ``name:``, or chat-N for the N-th chat)")


class PlanCheck(_Text):
    plan: str = Field(description="the NPC")


class RelationshipCheck(_Text):
    relationship: str = Field(description="the NPC whose view it is")
    with_: str = Field(alias="with", description="the other NPC")
    familiarity_at_least: int | None = Field(default=None, ge=0)
    sentiment_at_least: float | None = Field(default=None, ge=0, le=10)
    sentiment_at_most: float | None = Field(default=None, ge=0, le=10)


Check = MemoriesCheck | RetrievalCheck | ReplyCheck | PlanCheck | RelationshipCheck


@dataclass(frozen=True)
class Expect:
    """Checks made once everything the steps before caused is digested; ``lines[i]`` is check i's line."""

    checks: tuple[Check, ...]
    lines: tuple[int, ...]


Step = Perceive | Chat | InnerVoice | ClockSteps | Expect

_STEPS: dict[str, type[BaseModel] | None] = {
    "perceive": Perceive, "chat": Chat, "inner_voice": InnerVoice, "clock": ClockSteps, "expect": None,
}
_CHECKS: dict[str, type[BaseModel] | None] = {
    "memories": MemoriesCheck, "retrieval": RetrievalCheck, "reply": ReplyCheck, "plan": PlanCheck,
    "relationship": RelationshipCheck,
}


@dataclass(frozen=True)
class Scenario:
    """A parsed scenario; ``lines[i]`` is the line of ``steps[i]`` in ``path``."""

    path: Path
    name: str
    world: WorldSpec
    npcs: tuple[NpcSpec, ...]
    steps: tuple[Step, ...]
    lines: tuple[int, ...]

    @property
    def world_id(self) -> str:
        stem = "".join(c if (c.isascii() and c.isalnum()) or c in "_.-" else "-" for c in self.path.stem)
        return self.world.id or stem[:100]

    @property
    def start_time(self) -> datetime:
        return self.world.start_time


class ScenarioError(ValueError):
    """A scenario file that cannot run; ``problems`` are ``file:line: field: message`` lines."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def load_scenario(path: Path) -> Scenario:
    """Read and check ``path``.

    Raises:
        ScenarioError: naming the line and field of every problem found.
    """
    try:
        text = path.read_text()
    except OSError as exc:
        raise ScenarioError([f"{path}: cannot read: {exc.strerror}"]) from exc
    return parse_scenario(text, path)


def parse_scenario(text: str, path: Path) -> Scenario:
    """Parse a scenario's YAML text (``path`` names it in errors and decides its default world id)."""
    try:
        data, lines = _load_with_lines(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ScenarioError([f"{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}"]) from exc
    return _Parser(path, lines).scenario(data)


class _Parser:
    def __init__(self, path: Path, lines: dict[tuple[Any, ...], int]) -> None:
        self.path, self.lines, self.problems = path, lines, list[str]()

    def problem(self, where: tuple[Any, ...], message: str) -> None:
        line = next((self.lines[where[:n]] for n in range(len(where), -1, -1) if where[:n] in self.lines), 1)
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in where).lstrip(".")
        self.problems.append(f"{self.path}:{line}: {field or '(top)'}: {message}")

    def model(self, cls: type[BaseModel], data: object, where: tuple[Any, ...]) -> Any:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors():
                loc = tuple("with" if p == "with_" else p for p in err["loc"])
                self.problem(where + loc, err["msg"])
            return None

    def tagged(self, table: dict[str, type[BaseModel] | None], data: object, where: tuple[Any, ...]) -> Any:
        kinds = [k for k in data if k in table] if isinstance(data, dict) else []
        if len(kinds) != 1 or not isinstance(data, dict):
            self.problem(where, f"must be a mapping with exactly one of: {', '.join(table)}"
                         + (f" (found {', '.join(kinds)})" if kinds else ""))
            return None
        cls = table[kinds[0]]
        return self.expect(data, where) if cls is None else self.model(cls, data, where)

    def expect(self, data: dict[str, Any], where: tuple[Any, ...]) -> Expect | None:
        for key in set(data) - {"expect"}:
            self.problem((*where, key), "unknown key (an expect step holds only its list of checks)")
        raw = data["expect"]
        if not isinstance(raw, list) or not raw:
            self.problem((*where, "expect"), "give a list of checks")
            return None
        checks = [self.tagged(_CHECKS, c, (*where, "expect", j)) for j, c in enumerate(raw)]
        if None in checks:
            return None
        return Expect(tuple(checks), tuple(self.lines.get((*where, "expect", j), 1) for j in range(len(raw))))

    def scenario(self, data: object) -> Scenario:
        if not isinstance(data, dict):
            raise ScenarioError([f"{self.path}:1: (top): a scenario is a mapping with world, npcs and steps"])
        for key in set(data) - {"name", "world", "npcs", "steps"}:
            self.problem((key,), "unknown key (expected name, world, npcs, steps)")
        world = self.model(WorldSpec, data.get("world"), ("world",))
        npcs = [self.model(NpcSpec, n, ("npcs", i)) for i, n in enumerate(_seq(data.get("npcs", [])))]
        raw_steps = _seq(data.get("steps"))
        if not raw_steps:
            self.problem(("steps",), "give at least one step")
        steps = [self.tagged(_STEPS, s, ("steps", i)) for i, s in enumerate(raw_steps)]
        if world is not None and None not in npcs and None not in steps:
            self.references(world, npcs, steps)
        if self.problems:
            raise ScenarioError(self.problems)
        name = data.get("name") if isinstance(data.get("name"), str) else self.path.stem
        return Scenario(self.path, str(name), world, tuple(npcs), tuple(steps),
                        tuple(self.lines.get(("steps", i), 1) for i in range(len(steps))))

    def references(self, world: WorldSpec, npcs: list[NpcSpec], steps: list[Step]) -> None:
        """NPCs, chats and the clock that the steps name must exist (a template brings NPCs of its own)."""
        known = {n.npc_id for n in npcs}
        chats: set[str] = set()
        for i, step in enumerate(steps):
            for where, npc in _npcs_named(step, ("steps", i)):
                if world.template is None and npc not in known:
                    self.problem(where, f"no NPC {npc!r} in npcs")
            if isinstance(step, Chat):
                chats.add(chat_name(step, steps[: i + 1]))
            if isinstance(step, ClockSteps) and world.template is None and not world.places:
                self.problem(("steps", i, "clock"), "the clock needs world.places or world.template")
            for j, check in enumerate(step.checks if isinstance(step, Expect) else ()):
                if isinstance(check, ReplyCheck) and check.reply not in chats:
                    self.problem(("steps", i, "expect", j, "reply"),
                                 f"no chat named {check.reply!r} before this")


def chat_name(chat: Chat, steps_so_far: list[Step] | tuple[Step, ...]) -> str:
    """A chat's name: its ``name:``, or ``chat-N`` for the N-th chat step (counting from 1)."""
    return chat.name or f"chat-{sum(isinstance(s, Chat) for s in steps_so_far)}"


def _npcs_named(step: Step, where: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(step, Perceive | Chat | InnerVoice):
        key = next(iter(type(step).model_fields))
        yield (*where, key), getattr(step, key)
    if isinstance(step, Expect):
        for j, c in enumerate(step.checks):
            for key in ("memories", "retrieval", "plan", "relationship", "with_"):
                if isinstance(value := getattr(c, key, None), str):
                    yield (*where, "expect", j, "with" if key == "with_" else key), value


def _seq(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _load_with_lines(text: str) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """The YAML document and the line (1-based) of every mapping value and sequence item, by path."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    lines: dict[tuple[Any, ...], int] = {}

    def walk(n: yaml.Node, path: tuple[Any, ...]) -> None:
        lines[path] = n.start_mark.line + 1
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                walk(v, (*path, k.value))
                lines[(*path, k.value)] = k.start_mark.line + 1
        elif isinstance(n, yaml.SequenceNode):
            for i, item in enumerate(n.value):
                walk(item, (*path, i))

    if node is not None:
        walk(node, ())
    return data, lines
