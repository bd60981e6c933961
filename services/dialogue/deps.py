"""What the dialogue handlers need, built once by the entrypoint and passed down."""

from __future__ import annotations

from dataclasses import dataclass, field

from npcworld.llm import LLM
from npcworld.memory_client import MemoryReader
from npcworld.messaging.lanes import INGEST_CHUNK
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
    prepare_concurrency: int = INGEST_CHUNK  # a chats' batch (a chunk) has its replies made all at once
