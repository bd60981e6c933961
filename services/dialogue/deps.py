"""What the dialogue handlers need, built once by the entrypoint and passed down."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from npcworld.llm import LLM
from npcworld.memory_client import MemoryReader
from services.dialogue.domain import TurnRules
from services.dialogue.repository import DialogueRepository

__all__ = ["DialogueDeps"]


@dataclass(frozen=True)
class DialogueDeps:
    """The dialogue service's ports and rules."""

    llm: LLM
    memory: MemoryReader
    repository: DialogueRepository = field(default_factory=DialogueRepository)
    rules: TurnRules = field(default_factory=TurnRules)
    retrieve_k: int = 8
    # Player replies computed for a poll before its transaction (``prepare_replies``), by PlayerSpoke id.
    prepared: dict[uuid.UUID, Any] = field(default_factory=dict)
    prepare_concurrency: int = 4
