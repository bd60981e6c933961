"""All SQL of the memory service, behind one repository class (Postgres + pgvector)."""

from services.memory.repository._ablations import AblationRepository
from services.memory.repository._accesses import NotedAccess
from services.memory.repository._players import PlayerMemories
from services.memory.repository._ranking import IndexCandidates, SearchPlan
from services.memory.repository._releasing import HeldRelease
from services.memory.repository._rows import Conn, ScoreFloor
from services.memory.repository._streams import MemoryRepository

__all__ = [
    "AblationRepository",
    "Conn",
    "HeldRelease",
    "IndexCandidates",
    "MemoryRepository",
    "NotedAccess",
    "PlayerMemories",
    "ScoreFloor",
    "SearchPlan",
]
