"""How other services read an NPC's memory stream: the ``MemoryReader`` port and its wire models.

The memory service owns the stream; everyone else reads it through this port. Production uses the
HTTP adapter against the memory service's internal API; unit tests use an in-memory fake.
"""

from npcworld.memory_client.port import MemoryReader, MemoryView, RetrievalRequest, RetrievedView, Weights

__all__ = ["MemoryReader", "MemoryView", "RetrievalRequest", "RetrievedView", "Weights"]
