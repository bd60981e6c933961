"""Pure planning domain: plan items and their arithmetic, known places, planner state, reactions."""

from services.planning.domain.items import (
    ACTION_MAX_MINUTES,
    ACTION_MIN_MINUTES,
    CHUNK_MINUTES,
    Item,
    fit_actions,
    hour_slots,
    insert_item,
    item_at,
    name_chunks,
    normalise,
    plan_problems,
    replace_from,
    same_activity,
)
from services.planning.domain.places import KnownPlaces, Resolution, place_name, resolve_place
from services.planning.domain.reaction import (
    REACTIVE_SOURCES,
    Perceived,
    consider,
    mentioned,
    reaction_items,
    retrieval_queries,
)
from services.planning.domain.state import (
    Action,
    DayPlan,
    NpcKey,
    Persona,
    PlannerState,
    ProposedAction,
    actions_for,
    day_summary,
    keep_promise,
    rest_action,
    revise,
    waking_window,
)

__all__ = [
    "ACTION_MAX_MINUTES", "ACTION_MIN_MINUTES", "CHUNK_MINUTES", "REACTIVE_SOURCES", "Action", "DayPlan",
    "Item",
    "KnownPlaces", "NpcKey", "Perceived", "Persona", "PlannerState", "ProposedAction", "Resolution",
    "actions_for", "consider", "day_summary", "fit_actions", "hour_slots", "insert_item", "item_at",
    "keep_promise", "mentioned", "name_chunks", "normalise", "place_name", "plan_problems", "reaction_items",
    "replace_from", "resolve_place", "rest_action", "retrieval_queries", "revise", "same_activity",
    "waking_window",
]
