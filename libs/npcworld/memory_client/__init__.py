"""How other services read an NPC's memory stream: the ``MemoryReader`` port and its wire models.

The memory service owns the stream; everyone else reads it through this port. Production uses the
HTTP adapter (``npcworld.memory_client.http.HttpMemoryReader``) against the memory service's internal
API; unit tests use ``npcworld.memory_client.testing.FakeMemoryReader``.
"""

from npcworld.memory_client.port import (
    MemoryPage,
    MemoryReader,
    MemoryView,
    RetrievalRequest,
    RetrievedView,
    Weights,
    relied_on,
)
from npcworld.memory_client.settings import MemoryClientSettings

__all__ = [
    "MemoryClientSettings",
    "MemoryPage",
    "MemoryReader",
    "MemoryView",
    "RetrievalRequest",
    "RetrievedView",
    "Weights",
    "relied_on",
]
