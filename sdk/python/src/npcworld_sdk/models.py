"""Resource models, one per schema of contracts/openapi.json: ``from npcworld_sdk.models import WorldOut``."""

from __future__ import annotations

from npcworld_sdk._models import *  # noqa: F403
from npcworld_sdk._models import __all__ as __all__
