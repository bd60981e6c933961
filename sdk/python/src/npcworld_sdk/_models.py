"""Resource models generated from contracts/openapi.json by sdk/python/tools/generate_models.py:
do not edit."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Accepted",
    "ActionOut",
    "ActionRule",
    "ArenaDef",
    "AttemptOut",
    "CanonBody",
    "ChatIn",
    "ClockIn",
    "ClockOut",
    "DefinitionIn",
    "DeliveryDetail",
    "DeliveryOut",
    "EventOut",
    "ForgottenOut",
    "ForkIn",
    "InnerVoiceIn",
    "InterviewIn",
    "KeyCreated",
    "KeyIn",
    "KeyOut",
    "MemoryOut",
    "MemoryPageOut",
    "MemoryPatch",
    "NotReady",
    "NpcIn",
    "NpcOut",
    "NpcPatch",
    "NpcStateOut",
    "ObjectDef",
    "ObjectOut",
    "ObjectStateIn",
    "PageDeliveryOut",
    "PageEventOut",
    "PageKeyOut",
    "PageNpcOut",
    "PageWebhookOut",
    "PageWorldOut",
    "PerceptionIn",
    "PlanItemOut",
    "PlanOut",
    "PositionIn",
    "PositionsIn",
    "Problem",
    "ProblemField",
    "RelationshipOut",
    "ReplyOut",
    "ReplyPending",
    "RetrievalOut",
    "RetrieveIn",
    "RetrievedOut",
    "RulesBody",
    "ScoresOut",
    "SectorDef",
    "SessionIn",
    "SessionOut",
    "TemplateOut",
    "TenantCreated",
    "TenantIn",
    "TenantOut",
    "TreeOut",
    "UsageLine",
    "UsageOut",
    "ValidatorCreated",
    "ValidatorIn",
    "ValidatorOut",
    "WebhookCreated",
    "WebhookIn",
    "WebhookOut",
    "WebhookPatch",
    "Weights",
    "WorldIn",
    "WorldOut",
    "WorldReadiness",
]


class Accepted(BaseModel):
    """A 202: the event is stored; what the services make of it shows up in the event log."""

    model_config = ConfigDict(extra="allow")

    event_id: str


class ActionOut(BaseModel):
    """ActionOut"""

    model_config = ConfigDict(extra="allow")

    description: str
    duration_minutes: int
    emoji: str = ""
    location_path: str
    object_path: str | None = None
    object_state: str | None = None
    reaction_to: str | None = None
    start: datetime


class ActionRule(BaseModel):
    """A studio's rule over decided actions: an action of one of npc_ids (empty: any NPC) at one of"""

    model_config = ConfigDict(extra="forbid")

    npc_ids: list[str] = Field(default_factory=list)
    places: list[str] = Field(default_factory=list)
    reason: str = ""
    replacement: str | None = None
    replacement_place: str | None = None
    rule_id: str
    verdict: Literal["veto", "replace"] = "veto"
    words: list[str] = Field(default_factory=list)


class ArenaDef(BaseModel):
    """A room or open area; area is its tile rectangle (x0, y0, x1, y1 inclusive) in tiled worlds."""

    model_config = ConfigDict(extra="forbid")

    area: tuple[int, int, int, int] | None = None
    name: str
    objects: list[ObjectDef] = Field(default_factory=list)


class AttemptOut(BaseModel):
    """AttemptOut"""

    model_config = ConfigDict(extra="allow")

    attempt: int
    attempted_at: datetime
    duration_ms: float
    error: str | None
    status_code: int | None


class CanonBody(BaseModel):
    """Facts held true, each one short sentence ("The mayor is Tobias Wren")."""

    model_config = ConfigDict(extra="forbid")

    facts: list[str] = Field(default_factory=list)


class ChatIn(BaseModel):
    """ChatIn"""

    model_config = ConfigDict(extra="forbid")

    player_id: str
    text: str
    timeout_s: float = 10.0
    wait: bool = True
    world_time: datetime | None = None


class ClockIn(BaseModel):
    """ClockIn"""

    model_config = ConfigDict(extra="forbid")

    focus: list[str] | None = None
    mode: Literal["realtime", "fast", "stepped"] | None = None
    paused: bool | None = None
    speed: float | None = None
    step_seconds: float | None = None
    until: datetime | None = None


class ClockOut(BaseModel):
    """ClockOut"""

    model_config = ConfigDict(extra="allow")

    focus: list[str] | None = None
    mode: Literal["realtime", "fast", "stepped"]
    paused: bool
    speed: float | None
    step: int
    step_seconds: float
    world_time: datetime


class DefinitionIn(BaseModel):
    """DefinitionIn"""

    model_config = ConfigDict(extra="forbid")

    sectors: list[SectorDef]


class DeliveryDetail(BaseModel):
    """DeliveryDetail"""

    model_config = ConfigDict(extra="allow")

    attempt_log: list[AttemptOut]
    attempts: int
    created_at: datetime
    delivered_at: datetime | None
    delivery_id: int
    event_id: str
    event_type: str
    last_error: str | None
    last_status_code: int | None
    next_attempt_at: datetime | None
    seq: int
    status: Literal["pending", "delivered", "failed"]
    webhook_id: str


class DeliveryOut(BaseModel):
    """DeliveryOut"""

    model_config = ConfigDict(extra="allow")

    attempts: int
    created_at: datetime
    delivered_at: datetime | None
    delivery_id: int
    event_id: str
    event_type: str
    last_error: str | None
    last_status_code: int | None
    next_attempt_at: datetime | None
    seq: int
    status: Literal["pending", "delivered", "failed"]
    webhook_id: str


class EventOut(BaseModel):
    """EventOut"""

    model_config = ConfigDict(extra="allow")

    event: dict[str, Any]
    seq: int
    stream_id: str


class ForgottenOut(BaseModel):
    """ForgottenOut"""

    model_config = ConfigDict(extra="allow")

    already_forgotten: bool
    event_ids: list[str]
    llm_calls_redacted: int
    player_id: str
    worlds: list[str]


class ForkIn(BaseModel):
    """ForkIn"""

    model_config = ConfigDict(extra="forbid")

    at: datetime
    new_world_id: str | None = None


class InnerVoiceIn(BaseModel):
    """InnerVoiceIn"""

    model_config = ConfigDict(extra="forbid")

    directive: str
    world_time: datetime | None = None


class InterviewIn(BaseModel):
    """InterviewIn"""

    model_config = ConfigDict(extra="forbid")

    interviewer: str
    question: str
    timeout_s: float = 10.0
    wait: bool = True
    world_time: datetime | None = None


class KeyCreated(BaseModel):
    """KeyCreated"""

    model_config = ConfigDict(extra="allow")

    burst: int | None
    created_at: datetime
    expires_at: datetime | None = None
    key_id: str
    name: str
    rate_per_second: float | None
    revoked_at: datetime | None
    scopes: list[str]
    secret: str
    worlds: list[str] | None = None


class KeyIn(BaseModel):
    """KeyIn"""

    model_config = ConfigDict(extra="forbid")

    burst: int | None = None
    expires_at: datetime | None = None
    name: str
    rate_per_second: float | None = None
    scopes: list[Literal["read", "chat", "play", "write", "voice", "admin"]]
    worlds: list[str] | None = None


class KeyOut(BaseModel):
    """KeyOut"""

    model_config = ConfigDict(extra="allow")

    burst: int | None
    created_at: datetime
    expires_at: datetime | None = None
    key_id: str
    name: str
    rate_per_second: float | None
    revoked_at: datetime | None
    scopes: list[str]
    worlds: list[str] | None = None


class MemoryOut(BaseModel):
    """One memory of an NPC's stream."""

    model_config = ConfigDict(extra="allow")

    created_at: datetime
    depth: int = 0
    description: str
    evidence: list[str] = Field(default_factory=list)
    importance: int
    kind: Literal["observation", "reflection", "plan", "dialogue", "seed"]
    last_accessed_at: datetime
    location: str | None = None
    memory_id: str
    source: Literal["perceived", "told", "inferred", "designer"] = "perceived"
    subject: str | None = None
    told_by: str | None = None
    trust: Literal["high", "medium", "low"] = "high"


class MemoryPageOut(BaseModel):
    """MemoryPageOut"""

    model_config = ConfigDict(extra="allow")

    items: list[MemoryOut]
    next_cursor: str | None = None


class MemoryPatch(BaseModel):
    """MemoryPatch"""

    model_config = ConfigDict(extra="forbid")

    description: str


class NotReady(BaseModel):
    """NotReady"""

    model_config = ConfigDict(extra="allow")

    database: bool
    status: Literal["not ready"]


class NpcIn(BaseModel):
    """NpcIn"""

    model_config = ConfigDict(extra="forbid")

    age: int | None = None
    location: str | None = None
    name: str
    npc_id: str
    occupation: str | None = None
    seed: str = ""
    traits: list[str] = Field(default_factory=list)


class NpcOut(BaseModel):
    """NpcOut"""

    model_config = ConfigDict(extra="allow")

    age: int | None
    location: str | None
    name: str
    npc_id: str
    occupation: str | None
    retired: bool = False
    traits: list[str]


class NpcPatch(BaseModel):
    """The persona fields to change; fields left out keep their value (null clears age or occupation)."""

    model_config = ConfigDict(extra="forbid")

    age: int | None = None
    name: str | None = None
    occupation: str | None = None
    traits: list[str] | None = None


class NpcStateOut(BaseModel):
    """NpcStateOut"""

    model_config = ConfigDict(extra="allow")

    action: str | None
    action_end: datetime | None
    emoji: str
    known_places: list[str]
    latest_action: dict[str, Any] | None
    location: str | None
    npc_id: str
    plan: dict[str, Any] | None
    steps_left: int
    tile: tuple[int, int] | None
    walking_to: str | None


class ObjectDef(BaseModel):
    """An object in an arena, with its free-text state and (in tiled worlds) the tile it stands on."""

    model_config = ConfigDict(extra="forbid")

    name: str
    state: str = "idle"
    tile: tuple[int, int] | None = None


class ObjectOut(BaseModel):
    """ObjectOut"""

    model_config = ConfigDict(extra="allow")

    path: str
    state: str


class ObjectStateIn(BaseModel):
    """ObjectStateIn"""

    model_config = ConfigDict(extra="forbid")

    object_path: str
    state: str


class PageDeliveryOut(BaseModel):
    """Page[DeliveryOut]"""

    model_config = ConfigDict(extra="allow")

    items: list[DeliveryOut]
    next_cursor: str | None = None


class PageEventOut(BaseModel):
    """Page[EventOut]"""

    model_config = ConfigDict(extra="allow")

    items: list[EventOut]
    next_cursor: str | None = None


class PageKeyOut(BaseModel):
    """Page[KeyOut]"""

    model_config = ConfigDict(extra="allow")

    items: list[KeyOut]
    next_cursor: str | None = None


class PageNpcOut(BaseModel):
    """Page[NpcOut]"""

    model_config = ConfigDict(extra="allow")

    items: list[NpcOut]
    next_cursor: str | None = None


class PageWebhookOut(BaseModel):
    """Page[WebhookOut]"""

    model_config = ConfigDict(extra="allow")

    items: list[WebhookOut]
    next_cursor: str | None = None


class PageWorldOut(BaseModel):
    """Page[WorldOut]"""

    model_config = ConfigDict(extra="allow")

    items: list[WorldOut]
    next_cursor: str | None = None


class PerceptionIn(BaseModel):
    """PerceptionIn"""

    model_config = ConfigDict(extra="forbid")

    description: str
    location: str | None = None
    object: str | None = None
    predicate: str | None = None
    subject: str | None = None
    world_time: datetime


class PlanItemOut(BaseModel):
    """PlanItemOut"""

    model_config = ConfigDict(extra="allow")

    description: str
    duration_minutes: int
    location_path: str
    start: datetime


class PlanOut(BaseModel):
    """PlanOut"""

    model_config = ConfigDict(extra="allow")

    current_action: ActionOut | None
    day: str | None
    fallbacks: list[str]
    goals: list[str]
    items: list[PlanItemOut]
    npc_id: str
    outline: list[PlanItemOut]
    sleeps: datetime | None = None
    wakes: datetime | None = None


class PositionIn(BaseModel):
    """PositionIn"""

    model_config = ConfigDict(extra="forbid")

    npc_id: str
    path: str


class PositionsIn(BaseModel):
    """PositionsIn"""

    model_config = ConfigDict(extra="forbid")

    moves: list[PositionIn]


class Problem(BaseModel):
    """RFC 9457 problem details: the body of every error answer, as application/problem+json."""

    model_config = ConfigDict(extra="allow")

    detail: str
    errors: list[ProblemField] = Field(default_factory=list)
    status: int
    title: str
    type: str


class ProblemField(BaseModel):
    """ProblemField"""

    model_config = ConfigDict(extra="allow")

    field: str
    message: str


class RelationshipOut(BaseModel):
    """RelationshipOut"""

    model_config = ConfigDict(extra="allow")

    familiarity: int
    last_talked: datetime | None
    other_id: str
    player_id: str | None = None
    sentiment: float
    summary: str


class ReplyOut(BaseModel):
    """ReplyOut"""

    model_config = ConfigDict(extra="allow")

    event_id: str
    memory_ids: list[str]
    provider: str
    reply: str
    reply_event_id: str


class ReplyPending(BaseModel):
    """A chat or interview whose reply has not come yet (wait=false, or the timeout passed)."""

    model_config = ConfigDict(extra="allow")

    event_id: str
    status: Literal["pending"]


class RetrievalOut(BaseModel):
    """RetrievalOut"""

    model_config = ConfigDict(extra="allow")

    items: list[RetrievedOut]


class RetrieveIn(BaseModel):
    """RetrieveIn"""

    model_config = ConfigDict(extra="forbid")

    k: int = 10
    now: datetime | None = None
    query: str
    weights: Weights | None = None


class RetrievedOut(BaseModel):
    """RetrievedOut"""

    model_config = ConfigDict(extra="allow")

    created_at: datetime
    depth: int = 0
    description: str
    evidence: list[str] = Field(default_factory=list)
    importance: int
    kind: Literal["observation", "reflection", "plan", "dialogue", "seed"]
    last_accessed_at: datetime
    location: str | None = None
    memory_id: str
    scores: ScoresOut
    source: Literal["perceived", "told", "inferred", "designer"] = "perceived"
    subject: str | None = None
    told_by: str | None = None
    trust: Literal["high", "medium", "low"] = "high"


class RulesBody(BaseModel):
    """The world's rules over decided actions, in order: the first one an action breaks decides."""

    model_config = ConfigDict(extra="allow")

    rules: list[ActionRule] = Field(default_factory=list)


class ScoresOut(BaseModel):
    """Each component min-max normalised to [0, 1] over the NPC's stream; total = weighted sum."""

    model_config = ConfigDict(extra="allow")

    importance: float
    recency: float
    relevance: float
    total: float


class SectorDef(BaseModel):
    """A building or district: a group of arenas."""

    model_config = ConfigDict(extra="forbid")

    arenas: list[ArenaDef]
    name: str


class SessionIn(BaseModel):
    """SessionIn"""

    model_config = ConfigDict(extra="forbid")

    player_id: str
    ttl_seconds: int = 3600


class SessionOut(BaseModel):
    """SessionOut"""

    model_config = ConfigDict(extra="allow")

    expires_at: datetime
    player_id: str
    scopes: list[str]
    session_id: str
    token: str
    world_id: str


class TemplateOut(BaseModel):
    """TemplateOut"""

    model_config = ConfigDict(extra="allow")

    description: str
    name: str
    npc_count: int
    start_time: datetime
    step_seconds: float
    title: str


class TenantCreated(BaseModel):
    """TenantCreated"""

    model_config = ConfigDict(extra="allow")

    admin_key: KeyCreated
    created_at: datetime
    name: str
    tenant_id: str


class TenantIn(BaseModel):
    """TenantIn"""

    model_config = ConfigDict(extra="forbid")

    name: str


class TenantOut(BaseModel):
    """TenantOut"""

    model_config = ConfigDict(extra="allow")

    created_at: datetime
    name: str
    tenant_id: str


class TreeOut(BaseModel):
    """TreeOut"""

    model_config = ConfigDict(extra="allow")

    objects: list[ObjectOut]
    sectors: list[dict[str, Any]]
    source: str
    template: str | None
    tile_rows: list[str] | None = None
    tiled: bool
    world_id: str


class UsageLine(BaseModel):
    """UsageLine"""

    model_config = ConfigDict(extra="allow")

    calls: int
    failed_calls: int
    model: str
    prompt_kind: str
    provider: str
    tokens_in: int
    tokens_out: int


class UsageOut(BaseModel):
    """UsageOut"""

    model_config = ConfigDict(extra="allow")

    by_kind: list[UsageLine]
    calls: int
    tokens_in: int
    tokens_out: int
    world_id: str


class ValidatorCreated(BaseModel):
    """ValidatorCreated"""

    model_config = ConfigDict(extra="forbid")

    deadline_ms: int = 1000
    event_id: str
    npc_ids: list[str] = Field(default_factory=list)
    on_failure: Literal["accept", "veto"] = "accept"
    places: list[str] = Field(default_factory=list)
    secret: str
    url: str
    validator_id: str


class ValidatorIn(BaseModel):
    """Where decided actions are POSTed, how long an answer is waited for and what applies without one."""

    model_config = ConfigDict(extra="forbid")

    deadline_ms: int = 1000
    npc_ids: list[str] = Field(default_factory=list)
    on_failure: Literal["accept", "veto"] = "accept"
    places: list[str] = Field(default_factory=list)
    url: str


class ValidatorOut(BaseModel):
    """ValidatorOut"""

    model_config = ConfigDict(extra="forbid")

    deadline_ms: int = 1000
    npc_ids: list[str] = Field(default_factory=list)
    on_failure: Literal["accept", "veto"] = "accept"
    places: list[str] = Field(default_factory=list)
    url: str
    validator_id: str


class WebhookCreated(BaseModel):
    """WebhookCreated"""

    model_config = ConfigDict(extra="allow")

    active: bool
    created_at: datetime
    description: str
    event_types: list[str]
    secret: str
    url: str
    webhook_id: str
    world_id: str


class WebhookIn(BaseModel):
    """WebhookIn"""

    model_config = ConfigDict(extra="forbid")

    description: str = ""
    event_types: list[str] = Field(default_factory=list)
    url: str


class WebhookOut(BaseModel):
    """WebhookOut"""

    model_config = ConfigDict(extra="allow")

    active: bool
    created_at: datetime
    description: str
    event_types: list[str]
    url: str
    webhook_id: str
    world_id: str


class WebhookPatch(BaseModel):
    """WebhookPatch"""

    model_config = ConfigDict(extra="forbid")

    active: bool | None = None
    description: str | None = None
    event_types: list[str] | None = None
    url: str | None = None


class Weights(BaseModel):
    """Retrieval weights a_rec, a_imp, a_rel (DESIGN.md: each defaults to 1)."""

    model_config = ConfigDict(extra="forbid")

    importance: float = 1.0
    recency: float = 1.0
    relevance: float = 1.0


class WorldIn(BaseModel):
    """WorldIn"""

    model_config = ConfigDict(extra="forbid")

    name: str
    start_time: datetime
    template: str | None = None
    world_id: str | None = None


class WorldOut(BaseModel):
    """WorldOut"""

    model_config = ConfigDict(extra="allow")

    forked_from: str | None
    name: str
    npc_count: int
    readiness: WorldReadiness | None = None
    start_time: datetime | None
    template: str | None
    world_id: str


class WorldReadiness(BaseModel):
    """How far the world's set-up calls (creation, NPCs, tree) have been taken in by the world state."""

    model_config = ConfigDict(extra="allow")

    clock: bool
    npcs_known: int
    ready: bool
    tree: bool
