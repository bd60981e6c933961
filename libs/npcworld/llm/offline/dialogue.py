"""Offline dialogue: lines built from the speaker's retrieved memories and relationship, by fixed rules.

An opener shares the most relevant memory (an event with a time becomes an invitation); a reply accepts
an invitation with a commitment (unless the relationship is poor), answers from a memory not yet said,
or says goodbye and ends. Players get the most relevant memory back; their words are never obeyed.
"""

from __future__ import annotations

import re

from npcworld.llm.offline.text import entities, words
from npcworld.llm.prompts.dialogue import (
    CommitmentOut,
    DialogueSummaryInput,
    DialogueSummaryOutput,
    DialogueTurnInput,
    DialogueTurnOutput,
    PlayerLineInput,
    SpokenReply,
)

__all__ = ["answer_interview", "answer_player", "answer_summary", "answer_turn"]

_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?\b", re.IGNORECASE)
_PLACE = re.compile(r"\b(?:at|in) (?:the )?((?:[A-Z][\w']*)(?:\s+[A-Z][\w']*)*)")
_INVITE = re.compile(
    r"would you like to (?:come|join)|want to (?:come|join)|will you (?:come|join)|join (?:me|us)",
    re.IGNORECASE,
)
_FAREWELL = re.compile(r"\b(?:goodbye|bye|see you)\b", re.IGNORECASE)
_EVENTS = frozenset(
    [
        "party",
        "dinner",
        "lunch",
        "breakfast",
        "meeting",
        "celebration",
        "concert",
        "game",
        "wedding",
        "picnic",
        "show",
    ]
)
_WARM = frozenset(["love", "glad", "great", "wonderful", "thanks", "thank", "happy", "lovely", "nice"])
_COLD = frozenset(["hate", "stupid", "angry", "annoying", "awful", "leave", "go", "away", "shut"])


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _clock(text: str) -> list[str]:
    """Clock times in ``text`` as 24-hour "HH:MM"."""
    out = []
    for hour, minute, half in _TIME.findall(text):
        h = int(hour) % 12 + (12 if half.lower() == "p" else 0)
        if h < 24 and int(minute or 0) < 60:
            out.append(f"{h:02d}:{int(minute or 0):02d}")
    return out


def _minutes(clock: str) -> int:
    return int(clock[:2]) * 60 + int(clock[3:])


def _place(text: str, exclude: tuple[str, ...]) -> str | None:
    for match in _PLACE.finditer(text):
        name = match.group(1).removesuffix("'s")
        if name not in exclude and not _TIME.fullmatch(name):
            return name
    return None


def _voice(text: str, speaker: str, listener: str) -> str:
    """A third-person memory as the speaker says it to the listener (names become I / you)."""
    for name, (subj, be, have, poss) in (
        (speaker, ("I", "am", "have", "my")),
        (listener, ("you", "are", "have", "your")),
    ):
        for form in dict.fromkeys((name, *name.split()[:1])) if name.strip() else ():
            esc = re.escape(form)
            text = re.sub(rf"\b{esc} is\b", f"{subj} {be}", text)
            text = re.sub(rf"\b{esc} has\b", f"{subj} {have}", text)
            text = re.sub(rf"\b{esc}'s\b", poss, text)
    return text[:1].upper() + text[1:]


def _own(directive: str) -> str:
    """An inner-voice directive as the NPC's own thought ("You will run" -> "I will run")."""
    text = directive.strip()
    for pattern, mine in (
        (r"\byou are\b", "I am"),
        (r"\byou're\b", "I'm"),
        (r"\byours\b", "mine"),
        (r"\byourself\b", "myself"),
        (r"\byour\b", "my"),
        (r"\byou\b", "I"),
    ):
        text = re.sub(pattern, mine, text, flags=re.IGNORECASE)
    return text[:1].upper() + text[1:]


def _said(line: str, transcript_text: str) -> bool:
    """Whether the gist of ``line`` was already said (most of its content words appear)."""
    content = [w for w in words(line) if len(w) > 3]
    heard = set(words(transcript_text))
    return bool(content) and sum(w in heard for w in content) >= 0.6 * len(content)


def _warmth(sentiment: float, heard: str, base: int = 0) -> int:
    tokens = set(words(heard))
    tone = (1 if sentiment >= 6.5 else -1 if sentiment <= 3.5 else 0) + base
    tone += (1 if tokens & _WARM else 0) - (1 if tokens & _COLD else 0)
    return max(-2, min(2, tone))


def _accept(i: DialogueTurnInput, heard: str, other: str) -> DialogueTurnOutput:
    times = _clock(heard)
    place = _place(heard, (i.speaker, other, *i.speaker.split(), *other.split()))
    when = f" at {times[0]}" if times else ""
    if i.sentiment <= 3.0:
        return DialogueTurnOutput(
            utterance=f"Sorry, {other.split()[0]}, I can't make it.",
            end=False,
            warmth=_warmth(i.sentiment, heard, -1),
        )
    duration = _minutes(times[1]) - _minutes(times[0]) if len(times) > 1 else 60
    kind = next((w for w in words(heard) if w in _EVENTS), None)
    goal = f"go to {other.split()[0]}'s {kind}" if kind else f"meet {other}"
    commitment = CommitmentOut(
        description=_clip(f"{goal} at {place or 'the agreed place'}{when}", 1000),
        place=place,
        time=times[0] if times else None,
        duration_minutes=duration if 0 < duration <= 24 * 60 else 60,
    )
    where = f" at {place}" if place else ""
    return DialogueTurnOutput(
        utterance=f"I'd love to! I'll be there{where}{when}.",
        end=False,
        warmth=_warmth(i.sentiment, heard, 1),
        commitment=commitment,
    )


def _opener(i: DialogueTurnInput) -> DialogueTurnOutput:
    first = i.listener.split()[0]
    greeting = f"Hi {first}!" if i.familiarity else f"Hello {first}, I'm {i.speaker.split()[0]}."
    events = [m.description for m in i.memories if _clock(m.description)]
    if events:
        line = f"{greeting} {_voice(events[0], i.speaker, i.listener).rstrip('.')}. Would you like to come?"
    elif i.intentions:
        line = f"{greeting} I've made up my mind: {_own(i.intentions[-1]).rstrip('.')}."
    elif i.memories:
        line = f"{greeting} Did you hear? {_voice(i.memories[0].description, i.speaker, i.listener)}"
    elif i.reason:
        line = f"{greeting} I wanted to talk to you: {_clip(i.reason, 300)}"
    else:
        line = f"{greeting} How are you doing?"
    return DialogueTurnOutput(utterance=_clip(line, 1000), warmth=_warmth(i.sentiment, "", 0))


def answer_turn(i: DialogueTurnInput) -> DialogueTurnOutput:
    """Answer ``dialogue_turn``: opener, acceptance, a fresh memory, or goodbye (ending the conversation)."""
    if not i.transcript:
        return _opener(i)
    heard = i.transcript[-1].text
    other = i.listener
    said = " ".join(line.text for line in i.transcript)
    last_turn = i.turn >= i.max_turns
    if _INVITE.search(heard) and not last_turn:
        return _accept(i, heard, other)
    fresh = [m.description for m in i.memories if not _said(_voice(m.description, i.speaker, other), said)]
    if last_turn or _FAREWELL.search(heard) or not fresh or heard.startswith("I'd love to"):
        bye = "See you then" if heard.startswith("I'd love to") else "Good talking to you"
        return DialogueTurnOutput(
            utterance=f"{bye}, {other.split()[0]}. Goodbye!", end=True, warmth=_warmth(i.sentiment, heard)
        )
    lead = "Well," if heard.rstrip().endswith("?") else "That reminds me:"
    line = f"{lead} {_voice(fresh[0], i.speaker, other)}"
    return DialogueTurnOutput(utterance=_clip(line, 1000), warmth=_warmth(i.sentiment, heard))


def answer_summary(i: DialogueSummaryInput) -> DialogueSummaryOutput:
    """Answer ``dialogue_summary``: who talked where, the names that came up, and what they agreed."""
    a, b = i.participants
    text = " ".join(line.text for line in i.transcript)
    topics = entities(
        text,
        exclude=(
            *a.split(),
            *b.split(),
            "I",
            "Hello",
            "Hi",
            "Goodbye",
            "Well",
            "Sorry",
            "Good",
            "See",
            "That",
            "Did",
            "Would",
        ),
    )
    where = f" at {i.location}" if i.location else ""
    about = f" about {', '.join(topics[:4])}" if topics else ""
    summary = f'{a} and {b} talked{where}{about}. {a} said: "{_clip(i.transcript[0].text, 200)}"'
    if i.commitments:
        summary += " They agreed: " + "; ".join(i.commitments) + "."
    return DialogueSummaryOutput(summary=_clip(summary, 1500))


def _grounded(i: PlayerLineInput) -> str:
    """The most relevant thing the NPC knows, preferring its own knowledge over quoted speech."""
    known = [m for m in i.memories if ': "' not in m.description] or list(i.memories)
    if not known:
        return "I don't know anything about that."
    return _voice(_clip(known[0].description, 600), i.npc, "")


def answer_player(i: PlayerLineInput) -> SpokenReply:
    """Answer ``player_reply``: the NPC's most relevant memory, in its own voice (never obeyed)."""
    return SpokenReply(reply=_grounded(i))


def answer_interview(i: PlayerLineInput) -> SpokenReply:
    """Answer ``interview_answer``: the NPC's most relevant memory, told to the interviewer."""
    return SpokenReply(reply=f"Since you ask: {_grounded(i)}")
