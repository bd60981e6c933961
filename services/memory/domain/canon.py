"""Does something an NPC heard contradict designer canon? An offline, word-level check (no model), and the
claim memory it turns a contradicting line into (docs/studio-controls.md, "Designer canon").

It catches, sentence by sentence, a line about the same thing as a fact (most of the fact's content words)
that (1) negates it or drops a negation ("the mine never collapsed"), (2) gives other numbers ("collapsed
in 1920") or (3) names someone or something else where the fact names one ("the mayor is Bob Stone").
It misses paraphrase with other words, implication, irony and contradictions spread over sentences.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["claim_text", "contradicted"]

_WORD = re.compile(r"[A-Za-z0-9']+")
_SENTENCE = re.compile(r"[^.!?;]+[.!?;]*")
_BUT = re.compile(r"\s+but\s+", re.IGNORECASE)
_COPULA = re.compile(r"\b(?:is|was|are|were|has been|had been)\b", re.IGNORECASE)
_NEGATIONS = frozenset({
    "not", "no", "never", "nobody", "nothing", "neither", "nor", "none", "isn't", "wasn't", "aren't",
    "weren't", "didn't", "doesn't", "don't", "hasn't", "haven't", "hadn't", "won't", "can't", "cannot",
    "couldn't", "n't",
})
_STOP = frozenset({
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "and", "or", "is", "was", "are", "were", "be",
    "been", "has", "had", "have", "it", "its", "this", "that", "these", "those", "by", "with", "as", "from",
    "i", "you", "he", "she", "they", "we", "his", "her", "their", "our", "my", "your", "did", "does", "do",
    "so", "very", "really", "actually", "heard", "say", "says", "said", "told", "think", "know", "all",
    "s", "town", "still", "now", "ever", "just", "who", "what", "where", "when", "why", "how", "which",
}) | _NEGATIONS


def contradicted(statement: str, facts: Sequence[str]) -> str | None:
    """The first of ``facts`` that a sentence of ``statement`` contradicts; None when none is. A question
    claims nothing."""
    sentences = [part for s in _SENTENCE.findall(statement) if not s.rstrip().endswith("?")
                 for part in _BUT.split(s) if part.strip()]
    for sentence in sentences:
        for fact in facts:
            if _contradicts(sentence, fact):
                return fact
    return None


def claim_text(speaker: str, listener: str, line: str, fact: str) -> str:
    """How a contradicting line is remembered: the speaker's claim, with what the listener holds true."""
    return f'{speaker} claims to {listener}: "{line}" ({listener} knows otherwise: {fact})'


def _contradicts(sentence: str, fact: str) -> bool:
    if _other_name(sentence, fact):
        return True
    said, held = _words(sentence), _words(fact)
    said_plain = {w for w in _content(said) if not w.isdigit()}
    held_plain = {w for w in _content(held) if not w.isdigit()}
    # About the same thing: most of the fact's words are said, and little else is.
    shared = len(held_plain & said_plain)
    if not held_plain or shared * 2 < len(held_plain) or shared * 4 < len(said_plain) * 3:
        return False
    if _negated(said) != _negated(held):
        return True
    held_numbers = {w for w in held if w.isdigit()}
    said_numbers = {w for w in said if w.isdigit()}
    return bool(held_numbers and said_numbers and not held_numbers & said_numbers)


def _other_name(sentence: str, fact: str) -> bool:
    """``X is <Name>`` in the fact; in the sentence X is (or <Other Name> is X) someone else, sharing no
    name with the fact's."""
    held, said = _COPULA.split(fact, maxsplit=1), _COPULA.split(sentence, maxsplit=1)
    if len(held) != 2 or len(said) != 2 or _negated(_words(sentence)):
        return False
    subject, held_names = _content(_words(held[0])), _names(held[1])
    if not subject or not held_names:
        return False
    if subject <= _content(_words(said[0])):
        said_names = _names(said[1])
    elif subject <= _content(_words(said[1])):
        said_names = _names(said[0])
    else:
        return False
    return bool(said_names) and not said_names & held_names


def _names(text: str) -> set[str]:
    """Capitalised words (names) of one side of ``is``, lowercased."""
    return {w.lower() for w in _WORD.findall(text) if w[:1].isupper() and w.lower() not in _STOP}


def _words(text: str) -> list[str]:
    """Lowercased words, a plural or third-person ``s`` dropped ("owns" is "own")."""
    words = [w.lower().removesuffix("'s").strip("'") for w in _WORD.findall(text.replace("n't", " n't"))]
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words]


def _content(words: list[str]) -> set[str]:
    return {w for w in words if w and w not in _STOP}


def _negated(words: list[str]) -> bool:
    return sum(w in _NEGATIONS for w in words) % 2 == 1
