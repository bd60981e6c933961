"""The offline provider: deterministic cognition written in this project (the embedded default)."""

from npcworld.llm.offline.cognition import OFFLINE_ANSWERS, OfflineCognition
from npcworld.llm.offline.importance import score_memory
from npcworld.llm.offline.llm import OfflineLLM

__all__ = ["OFFLINE_ANSWERS", "OfflineCognition", "OfflineLLM", "score_memory"]
