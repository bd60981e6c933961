"""Deterministic text analysis for offline cognition: words, named entities and recurring topics."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "CLOCK_TIME", "EVENT_KINDS", "SPOKEN_LINE", "content_terms", "entities", "matches", "told", "words",
]

# A clock time as people write it ("5 pm", "7:30 a.m.").
CLOCK_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?\b", re.IGNORECASE)
# Kinds of gathering people are invited to.
EVENT_KINDS = frozenset(["party", "dinner", "lunch", "breakfast", "meeting", "celebration", "concert", "game",
                         "wedding", "picnic", "show"])

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CAPITALISED_RUN = re.compile(r"[A-Z][a-zA-Z]+(?:'s)?(?:\s+[A-Z][a-zA-Z]+(?:'s)?)*")
# Function words plus the generic verbs observations are made of: they recur but say nothing.
_STOP_WORDS = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me more
most my myself no nor not now of off on once only or other our ours out over own same she should so
some such than that the their theirs them then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you your yours
today tonight tomorrow yesterday morning afternoon evening night currently still around really
something someone thing things going getting got get goes went come comes coming came make makes
making made take takes taking took think thinks thinking thought feel feels feeling felt want wants
wanted say says said tell tells told know knows knew see sees saw look looks looking seem seems keep
keeps kept being doing done time times day days minute minutes hour hours while whether about
another others every just like likes liked need needs needed talking chatting walking sitting
standing waiting using
"""
_STOP = frozenset(_STOP_WORDS.split())
# A remembered line as the memory service stores it: 'Ana said to Ben: "…"'.
SPOKEN_LINE = re.compile(
    r'^(?P<who>[^":]{1,200}?) said to (?P<to>[^":]{1,200}?): "(?P<text>.*)"\s*$', re.DOTALL)
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
# Words that lead into what a line tells without telling anything themselves.
_LEAD = re.compile(r"^(?:that reminds me:|did you hear\?|well,|oh,)\s*", re.IGNORECASE)
# Sentences said for the company, not the content: greetings, thanks, farewells, how-are-yous.
_PLEASANTRY = re.compile(
    r"^(?:hi|hello|hey|good (?:morning|afternoon|evening)|thanks|thank you|goodbye|bye|see you|good talking"
    r"|nice to (?:meet|see) you|how are you|i'm \w+[.!]?$|really\b)", re.IGNORECASE)


def words(text: str) -> list[str]:
    """Lower-case words of ``text`` (apostrophes inside words kept, possessive 's dropped)."""
    return [w.removesuffix("'s") for w in _WORD.findall(text.lower().replace("\u2019", "'"))]


def told(line: str) -> str:
    """What a spoken line tells: its sentences without greetings, thanks, farewells and lead-ins ("That
    reminds me:"); empty when it was all pleasantries."""
    kept = []
    for sentence in _SENTENCE.findall(line):
        sentence = _LEAD.sub("", sentence.strip()).strip()
        if sentence and not _PLEASANTRY.match(sentence):
            kept.append(sentence)
    return " ".join(kept)


def matches(pattern: tuple[str, ...], tokens: list[str]) -> bool:
    """Whether the word pattern occurs as a contiguous run in ``tokens`` (``word*`` = prefix)."""
    n = len(pattern)
    for start in range(len(tokens) - n + 1):
        if all(_word_matches(p, tokens[start + k]) for k, p in enumerate(pattern)):
            return True
    return False


def _word_matches(pattern: str, token: str) -> bool:
    return token.startswith(pattern[:-1]) if pattern.endswith("*") else token == pattern


def entities(text: str, exclude: Iterable[str] = ()) -> list[str]:
    """Names (runs of capitalised words) in ``text``, leading function words and ``exclude`` removed."""
    excluded = {e.lower() for e in exclude}
    found: list[str] = []
    for run in _CAPITALISED_RUN.findall(text.replace("\u2019", "'")):
        parts = run.split()
        parts[-1] = parts[-1].removesuffix(
            "'s"
        )  # "Klaus Mueller's" -> "Klaus Mueller"; "Valentine's Day" stays
        while parts and parts[0].lower() in _STOP:
            parts.pop(0)
        name = " ".join(parts)
        if name and name.lower() not in excluded and not all(p.lower() in excluded for p in parts):
            found.append(name)
    return list(dict.fromkeys(found))


def _stem(word: str) -> str:
    if word.endswith("ies") and len(word) > 5:
        return word[:-3] + "y"
    if word.endswith("ing") and len(word) > 6:
        return word[:-3]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 4:
        return word[:-1]
    return word


def content_terms(text: str, skip: Iterable[str] = ()) -> dict[str, str]:
    """Content words of ``text`` as ``{stem: surface form}``, ignoring function words and ``skip``."""
    skipped = {w.lower() for s in skip for w in words(s)}
    terms: dict[str, str] = {}
    for word in words(text):
        if len(word) < 4 or word in _STOP or word in skipped or word.isdigit():
            continue
        terms.setdefault(_stem(word), word)
    return terms
