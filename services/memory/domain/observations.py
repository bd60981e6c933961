"""Duplicate-observation suppression: an unchanged state seen again is not stored again.

The paper's code skips an event already among the NPC's latest perceived events; here the state of one
entity at one place is compared with the last stored observation of it, within a world-time window,
so an NPC watching an idle stove all morning remembers it once, and again after it changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

__all__ = ["PreviousObservation", "is_duplicate", "normalise_description", "state_key"]

_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class PreviousObservation:
    """The latest stored observation with the same state key."""

    description: str
    created_at: datetime


def normalise_description(text: str) -> str:
    """Case, surrounding space, repeated space and a final full stop do not make a new state."""
    return _SPACES.sub(" ", text).strip().rstrip(".").strip().casefold()


def state_key(description: str, subject: str | None, location: str | None) -> str:
    """Which entity (at which place) an observation is about: the subject, else the description itself."""
    entity = normalise_description(subject) if subject else normalise_description(description)
    return f"{(location or '').strip().casefold()}|{entity}"


def is_duplicate(
    description: str, observed_at: datetime, previous: PreviousObservation | None, window: timedelta
) -> bool:
    """True when ``previous`` has the same state and was stored less than ``window`` of world time ago."""
    if previous is None:
        return False
    same_state = normalise_description(previous.description) == normalise_description(description)
    return same_state and timedelta(0) <= observed_at - previous.created_at < window
