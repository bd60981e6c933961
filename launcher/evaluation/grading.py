"""Rule-based grading of interview answers against an NPC's ground truth (pure): whether an answer states an
expected fact, and whether it asserts something the NPC never perceived (the paper's 1.3 % hallucination)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "CATEGORIES",
    "Category",
    "Grade",
    "Knowledge",
    "Question",
    "claims",
    "content_words",
    "grade",
    "recall",
]

Category = Literal["self_knowledge", "memory", "plans", "reactions", "reflections"]
CATEGORIES: tuple[Category, ...] = ("self_knowledge", "memory", "plans", "reactions", "reflections")

_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
# Function words and the stock phrases of an answer ("since you ask", "I don't know"): they state nothing.
_STOP = frozenset(
    """
a about after again all also am an and any are as at be been before being but by can could did do does
don doing for from had has have having he her here him his how i if in into is it its just me my myself
no not now of off on once only or our out over own she so some such than that the their them then there
these they this those to too under until up very was we were what when where which while who whom why
will with would you your yours since ask asked know knows don't nothing anything something well yes
today tonight tomorrow yesterday morning afternoon evening night really think thing things
""".split()  # noqa: SIM905
)
# An answer is correct when it recalls this share of an expected fact's content words (at most _ENOUGH).
CORRECT_RECALL = 0.5
_ENOUGH = 3
# A claim is grounded when this share of its content words comes from one thing the NPC knows.
GROUNDED_PRECISION = 0.5
_MIN_CLAIM_WORDS = 2  # shorter sentences ("Hello there.") assert nothing


@dataclass(frozen=True)
class Question:
    """One interview question and the facts (any one suffices) a correct answer states."""

    npc_id: str
    category: Category
    text: str
    expected: tuple[str, ...]


@dataclass(frozen=True)
class Knowledge:
    """Everything an NPC could know: its persona and seed, what it perceived, planned, reflected and heard."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class Grade:
    """How one answer fared: ``score`` is the best recall of an expected fact (0 to 1)."""

    correct: bool
    score: float
    hallucinated: bool
    unsupported: tuple[str, ...]


def content_words(text: str) -> frozenset[str]:
    """Lower-case content words, a plural or third-person ``s`` dropped so that forms meet."""
    found = set()
    for w in _WORD.findall(text.lower().replace("\u2019", "'").replace("'s", "")):
        if w not in _STOP and len(w) > 1:
            found.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return frozenset(found)


def recall(fact: str, answer: str, given: frozenset[str] = frozenset()) -> float:
    """How much of ``fact`` the answer states: hits over half the fact's content words (three at most),
    capped at 1 (1: the answer states the fact); ``given`` words (the NPC's own name) state nothing."""
    wanted = content_words(fact) - given
    if not wanted:
        return 0.0
    needed = min(math.ceil(CORRECT_RECALL * len(wanted)), _ENOUGH)
    return min(1.0, len(wanted & content_words(answer)) / needed)


def claims(answer: str) -> list[str]:
    """The sentences of an answer that assert something (at least two content words); a word cut off by
    a clipped answer ("the even...") is left out."""
    answer = re.sub(r"\w*(\.\.\.|\u2026)\s*$", "", answer)
    return [s.strip() for s in _SENTENCE.split(answer)
            if len(content_words(s)) >= _MIN_CLAIM_WORDS]


def _grounded(claim: str, known: list[frozenset[str]], self_words: frozenset[str]) -> bool:
    said = content_words(claim) - self_words
    if not said:
        return True
    return any(len(said & k) / len(said) >= GROUNDED_PRECISION for k in known)


def grade(question: Question, answer: str, knowledge: Knowledge, self_name: str = "") -> Grade:
    """Grade ``answer`` to ``question``.

    Correct when it states an expected fact (``recall`` 1: half of the fact's content words, three at
    most, appear in it; the NPC's own name is not a fact about it). Hallucinated when one of its claims has
    less than ``GROUNDED_PRECISION`` of its content words in any single thing the NPC knows (``self_name``
    and the question's own words count as known: repeating the question invents nothing).
    """
    name = content_words(self_name)
    score = max((recall(f, answer, name) for f in question.expected), default=0.0)
    known = [content_words(t) for t in knowledge.texts]
    self_words = name | content_words(question.text)
    unsupported = tuple(c for c in claims(answer) if not _grounded(c, known, self_words))
    return Grade(score >= 1.0, score, bool(unsupported), unsupported)
