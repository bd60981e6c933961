"""Offline importance: poignancy 1-10 from the nearest examples of the anchor bank in embedding space.

A memory is embedded with the local sentence model (MiniLM, no network) and compared with every anchor of
``anchors.IMPORTANCE_ANCHORS``; its score is the similarity-weighted mean level of its ``k`` nearest anchors
(weights ``exp((sim - best) / temperature)``, so the closest examples count most), rounded to an integer.
Similarities are rounded to 4 decimals first, so the score cannot hinge on the last bits of a float.
The anchors are embedded once per process and scores are cached by text; the same text always gets the same
score. A remembered line (``X said to Y: "…"``) is rated by what it tells: its greetings, thanks and farewells
are left out, and a line of nothing else (pleasantries said in passing) is rated 1, like brushing one's teeth.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from npcworld.llm.offline.anchors import IMPORTANCE_ANCHORS
from npcworld.llm.offline.text import SPOKEN_LINE, told
from npcworld.llm.prompts import (
    ImportanceBatchInput,
    ImportanceBatchOutput,
    ImportanceInput,
    ImportanceOutput,
)

__all__ = [
    "AnchorScorer", "default_scorer", "gist", "rate_importance", "rate_importance_batch", "score_memory",
]

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]

NEAREST = 7
TEMPERATURE = 0.04
# A text unlike every anchor (best similarity well below PRIOR_SIMILARITY) says little about its level: a
# pseudo-anchor at this similarity and level pulls such texts toward an everyday score.
PRIOR_SIMILARITY = 0.25
PRIOR_LEVEL = 3
_CACHE_SIZE = 50_000


PLEASANTRY_LEVEL = 1


def gist(text: str) -> str:
    """What is rated of a memory: a remembered line without its pleasantries ("" when that was all of it),
    anything else as it is."""
    line = SPOKEN_LINE.match(text)
    if line is None:
        return text
    said = told(line["text"])
    return f'{line["who"]} said to {line["to"]}: "{said}"' if said else ""


class AnchorScorer:
    """Scores texts 1-10 against an anchor bank with ``embed`` (unit vectors, one row per text)."""

    def __init__(
        self,
        embed: Embed,
        anchors: Sequence[tuple[str, int]] = IMPORTANCE_ANCHORS,
        k: int = NEAREST,
        temperature: float = TEMPERATURE,
    ) -> None:
        if not anchors:
            raise ValueError("an anchor bank needs at least one example")
        self._embed = embed
        self._texts = [t for t, _ in anchors]
        self._levels = np.array([level for _, level in anchors], dtype=np.float64)
        self._k = max(1, min(k, len(anchors)))
        self._temperature = temperature
        self._anchors: npt.NDArray[np.float64] | None = None
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        self._cache_lock = threading.Lock()

    def _bank(self) -> npt.NDArray[np.float64]:
        if self._anchors is None:
            with self._lock:
                if self._anchors is None:
                    self._anchors = np.asarray(self._embed(self._texts), dtype=np.float64)
        return self._anchors

    def _score(self, vector: npt.NDArray[np.float64]) -> int:
        sims = np.round(self._bank() @ vector, 4)
        nearest = np.argsort(-sims, kind="stable")[: self._k]
        top = sims[nearest]
        weights = np.exp((top - top[0]) / self._temperature)
        prior = float(np.exp((PRIOR_SIMILARITY - top[0]) / self._temperature))
        total = np.dot(weights, self._levels[nearest]) + prior * PRIOR_LEVEL
        level = float(total / (weights.sum() + prior))
        return int(min(10, max(1, np.floor(level + 0.5))))

    def scores(self, texts: Sequence[str]) -> list[int]:
        """One score per text, in order; texts not scored before are embedded in one batch. Safe to call
        from several threads at once."""
        texts = [gist(t) for t in texts]
        with self._cache_lock:
            known = {t: self._cache[t] for t in texts if t in self._cache}
        known[""] = PLEASANTRY_LEVEL
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            vectors = np.asarray(self._embed(missing), dtype=np.float64)
            fresh = {text: self._score(vector) for text, vector in zip(missing, vectors, strict=True)}
            known.update(fresh)
            with self._cache_lock:
                self._cache.update(fresh)
                while len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        return [known[t] for t in texts]


_DEFAULT: AnchorScorer | None = None
_DEFAULT_LOCK = threading.Lock()


def default_scorer() -> AnchorScorer:
    """The process's scorer on the local MiniLM model (loaded on first use)."""
    global _DEFAULT
    if _DEFAULT is None:
        with _DEFAULT_LOCK:
            if _DEFAULT is None:
                from npcworld.embeddings.local import LocalMiniLMEmbedder

                # One thread, as the memory service's embedder (EMBEDDING_THREADS): the whole of a call
                # then runs on the thread that makes it, lowered when it is made for ingest
                # (``npcworld.yielding``), instead of half of it on a model thread of its own priority.
                _DEFAULT = AnchorScorer(LocalMiniLMEmbedder(threads=1).embed_sync)
    return _DEFAULT


def score_memory(description: str, npc_name: str = "") -> int:
    """Poignancy (1-10) of one memory; ``npc_name`` is accepted for symmetry with the prompt and unused."""
    return default_scorer().scores([description])[0]


def rate_importance(inputs: ImportanceInput) -> ImportanceOutput:
    """Answer the ``importance`` prompt: one score per memory, in order, from one batch of embeddings."""
    return ImportanceOutput(scores=tuple(default_scorer().scores(list(inputs.memories))))


def rate_importance_batch(inputs: ImportanceBatchInput) -> ImportanceBatchOutput:
    """Answer the ``importance_batch`` prompt: each character's memories scored as ``importance`` would score
    them (a text's score does not depend on the batch it came in), from one batch of embeddings."""
    texts = [t for p in inputs.people for t in p.memories]
    scores = iter(default_scorer().scores(texts))
    return ImportanceBatchOutput(scores=tuple(tuple(next(scores) for _ in p.memories) for p in inputs.people))
