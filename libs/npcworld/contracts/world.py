"""World-level events (npcworld.world.v1): lifecycle, NPCs, the world tree, movement, object states, clock."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from npcworld.contracts.base import EventPayload
from npcworld.contracts.planning import ObjectStateChange
from npcworld.contracts.topics import WORLD, Topic

__all__ = [
    "Ablation",
    "ActionStarted",
    "ArenaDef",
    "ClockChanged",
    "NpcCreated",
    "NpcMove",
    "NpcsMoved",
    "ObjectDef",
    "ObjectStateChanged",
    "SectorDef",
    "StepCompleted",
    "TileMap",
    "WorldCreated",
    "WorldDefined",
    "WorldDeleted",
    "WorldForked",
    "WorldTicked",
]


Ablation = Literal["observation", "reflection", "planning"]


class WorldCreated(EventPayload):
    """A world came into being, empty or from a template.

    ``ablations`` (evaluation only: the paper's ablated architectures) names memory its NPCs never record:
    ``observation`` (what they perceive and hear), ``reflection`` (reflection insights), ``planning`` (plans).
    """

    event_type: ClassVar[str] = "WorldCreated"
    topic: ClassVar[Topic] = WORLD

    name: str = Field(min_length=1, max_length=200)
    template: str | None = None
    start_time: datetime
    ablations: tuple[Ablation, ...] = Field(
        default=(), description="memory the NPCs never record (evaluation): observation, reflection, planning"
    )


class WorldForked(EventPayload):
    """This world was forked from another at a world time. It inherits the source's history up to then (the
    source's events up to sequence number ``inherited_until_seq`` with a world time up to
    ``at_world_time``); a fork made before inheritance existed copied it instead (``copied_events``, no
    ``inherited_until_seq``)."""

    event_type: ClassVar[str] = "WorldForked"
    topic: ClassVar[Topic] = WORLD

    source_world_id: str
    at_world_time: datetime
    copied_events: int = Field(default=0, ge=0)
    inherited_until_seq: int | None = Field(
        default=None, ge=0, description="the source's last sequence number the fork inherits (none: copied)"
    )


class WorldDeleted(EventPayload):
    """The world was deleted; projections drop it."""

    event_type: ClassVar[str] = "WorldDeleted"
    topic: ClassVar[Topic] = WORLD


class NpcCreated(EventPayload):
    """An NPC joined the world with a persona; ``seed`` is split on ';' into seed memories."""

    event_type: ClassVar[str] = "NpcCreated"
    topic: ClassVar[Topic] = WORLD

    npc_id: str = Field(min_length=1, max_length=100)
    name: str = Field(min_length=1, max_length=200)
    age: int | None = Field(default=None, ge=0, le=1000)
    traits: tuple[str, ...] = ()
    occupation: str | None = None
    seed: str = ""
    location: str | None = None
    known_places: tuple[str, ...] = Field(default=(), description="places the persona knows from the start")


class WorldTicked(EventPayload):
    """The world clock advanced one step to ``world_time`` (the envelope's world_time is the same).

    Perception computes what each NPC perceives on every tick; planning starts the next action of an
    NPC whose current one has ended.
    """

    event_type: ClassVar[str] = "WorldTicked"
    topic: ClassVar[Topic] = WORLD

    step: int = Field(ge=0)
    step_seconds: float = Field(gt=0, le=86400)
    detail: tuple[str, ...] | None = Field(
        default=None,
        description="level of detail: the NPCs in full detail this step (in a focus place of the clock); the "
        "others run coarse. None: every NPC in full detail",
    )
    due_at: float | None = Field(
        default=None,
        description="a real-time clock: when this step was due (Unix seconds), from which the next one is "
        "scheduled; None: a stepped clock, or a tick recorded before schedules were kept (paced from its "
        "recorded_at)",
    )


class StepCompleted(EventPayload):
    """Every consequence of step ``step`` of a stepped clock has been digested (the clock's barrier).

    Appended by the ticker before the next step, only when a service holds work back for the boundary:
    in stepped worlds the memory service records a step's memories and last accesses here, all at once
    and in a fixed order, so no retrieval during a step races the writes of that same step.
    """

    event_type: ClassVar[str] = "StepCompleted"
    topic: ClassVar[Topic] = WORLD

    step: int = Field(ge=0)


class ObjectDef(BaseModel):
    """An object in an arena, with its free-text state and (in tiled worlds) the tile it stands on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=100, pattern=r"^[^:]+$")
    state: str = Field(default="idle", min_length=1, max_length=400)
    tile: tuple[int, int] | None = None


class ArenaDef(BaseModel):
    """A room or open area; ``area`` is its tile rectangle (x0, y0, x1, y1 inclusive) in tiled worlds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=100, pattern=r"^[^:]+$")
    area: tuple[int, int, int, int] | None = None
    objects: tuple[ObjectDef, ...] = ()


class SectorDef(BaseModel):
    """A building or district: a group of arenas."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=100, pattern=r"^[^:]+$")
    arenas: tuple[ArenaDef, ...] = Field(min_length=1)


class TileMap(BaseModel):
    """Collision map: one string per row, ``#`` blocked and ``.`` walkable."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    width: int = Field(ge=1, le=1000)
    height: int = Field(ge=1, le=1000)
    rows: tuple[str, ...]


class WorldDefined(EventPayload):
    """The world tree (sectors → arenas → objects) was set, from a template or a studio definition.

    Built-in worlds carry a tile map and tile coordinates; studio worlds carry neither and their engine
    posts positions. Paths elsewhere are ``world_id:sector:arena[:object]``.
    """

    event_type: ClassVar[str] = "WorldDefined"
    topic: ClassVar[Topic] = WORLD

    sectors: tuple[SectorDef, ...] = Field(min_length=1)
    tile_map: TileMap | None = None
    source: Literal["template", "studio"] = "studio"
    template: str | None = None
    step_seconds: float = Field(default=10, gt=0, le=86400, description="world seconds per clock step")


class NpcMove(BaseModel):
    """One NPC's new position: the arena path it is in and, in tiled worlds, its tile."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    npc_id: str = Field(min_length=1, max_length=100)
    path: str = Field(min_length=1, max_length=400, description="world:sector:arena[:object]")
    tile: tuple[int, int] | None = None
    arrived: bool = True


class NpcsMoved(EventPayload):
    """NPCs moved during one clock step (world-state walking them along paths, or a studio engine)."""

    event_type: ClassVar[str] = "NpcsMoved"
    topic: ClassVar[Topic] = WORLD

    moves: tuple[NpcMove, ...] = Field(min_length=1)
    source: Literal["world_state", "studio"] = "world_state"


class ActionStarted(EventPayload):
    """World-state took up an NPC's decided action: what the NPC now does and the route it walks there.

    The outcome of applying an ``ActionDecided`` to the world as it was at that moment (the NPC's tile, the
    tile map), recorded so the world-state read model is a fold of events: ``route`` is the tiles still to
    walk (empty when there is no tile map or the NPC is there already), ``arrived_at`` the place the NPC is
    in at once when it already stood on the target tile.
    """

    event_type: ClassVar[str] = "ActionStarted"
    topic: ClassVar[Topic] = WORLD

    description: str = Field(min_length=1, max_length=1000)
    emoji: str = Field(default="", max_length=16)
    ends_at: datetime
    target: str | None = Field(default=None, max_length=400, description="the place resolved in the tree")
    route: tuple[tuple[int, int], ...] = ()
    arrived_at: str | None = Field(default=None, max_length=400)
    object_state: ObjectStateChange | None = None


class ActionRule(BaseModel):
    """A studio's rule over decided actions: an action of one of ``npc_ids`` (empty: any NPC) at one of
    ``places`` (a place or inside one; empty: anywhere) whose description has one of ``words`` (whole words,
    any case; empty: any action) is vetoed, or replaced by ``replacement`` at ``replacement_place``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rule_id: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,100}$")
    npc_ids: tuple[str, ...] = Field(default=(), max_length=1000)
    places: tuple[str, ...] = Field(default=(), max_length=100)
    words: tuple[str, ...] = Field(default=(), max_length=100)
    verdict: Literal["veto", "replace"] = "veto"
    replacement: str | None = Field(default=None, min_length=1, max_length=1000)
    replacement_place: str | None = Field(default=None, min_length=1, max_length=400)
    reason: str = Field(default="", max_length=500, description="shown in the veto event and the why view")

    @model_validator(mode="after")
    def _replacement_given(self) -> ActionRule:
        if self.verdict == "replace" and self.replacement is None:
            raise ValueError("a replace rule needs a replacement")
        return self


class ActionRulesSet(EventPayload):
    """The world's rules over decided actions, replacing the previous set (empty: no rules)."""

    event_type: ClassVar[str] = "ActionRulesSet"
    topic: ClassVar[Topic] = WORLD

    rules: tuple[ActionRule, ...] = Field(default=(), max_length=200)


class ActionVetoed(EventPayload):
    """A decided action broke a rule (``rule_id``) or its world's validator vetoed it (``validator_id``;
    ``failure`` when that was the validator's default, not its answer) and did not take effect
    (``replaced_by``: what the NPC does instead). Caused by the ``ActionDecided``, so the why view shows it
    with the decision behind it."""

    event_type: ClassVar[str] = "ActionVetoed"
    topic: ClassVar[Topic] = WORLD

    rule_id: str | None = None
    validator_id: str | None = None
    failure: Literal["timeout", "error"] | None = None
    reason: str = Field(default="", max_length=1000)
    description: str = Field(max_length=1000)
    location_path: str = Field(max_length=400)
    replaced_by: str | None = None


class ObjectStateChanged(EventPayload):
    """An object's free-text state changed ("coffee machine: brewing coffee")."""

    event_type: ClassVar[str] = "ObjectStateChanged"
    topic: ClassVar[Topic] = WORLD

    object_path: str = Field(min_length=1, max_length=400, description="world:sector:arena:object")
    state: str = Field(min_length=1, max_length=400)
    source: Literal["action", "user", "idle"] = "action"
    by_npc: str | None = None


class ClockChanged(EventPayload):
    """The world clock was paused, resumed or re-paced.

    ``speed`` is world seconds per wall second (1 = real time); None means stepped: the next step
    starts as soon as the pipeline has digested the previous one.
    """

    event_type: ClassVar[str] = "ClockChanged"
    topic: ClassVar[Topic] = WORLD

    paused: bool
    speed: float | None = Field(default=None, gt=0, le=100000)
    step_seconds: float = Field(gt=0, le=86400)
    until: datetime | None = Field(
        default=None, description="the clock pauses itself on reaching this world time"
    )
    focus: tuple[str, ...] | None = Field(
        default=None,
        description="level of detail: place paths (a sector, an arena…) where NPCs run in full detail; NPCs "
        "elsewhere run coarse (hourly actions, no per-step perception, no reactions to it). None: every NPC "
        "in full detail (the paper's simulation)",
    )
