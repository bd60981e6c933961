"""Offline dialogue: lines built from the speaker's retrieved memories, relationship, persona and plans, by
fixed rules.

News: a memory of importance >= ``NEWS_MIN`` (a memory shown without one is rated as offline importance
rates it) that the listener lacks (not about the listener, not heard from
the listener, not already told to them, not said in this conversation), the most important first. Told in
the speaker's voice when it is the speaker's own, or quoted with its source when it was heard from someone
("Marta Quill told me: "..."") so every piece of gossip can be traced to a memory of the one who says it.
News of an event with a time (not yet past) becomes an invitation. A gathering still to come that the speaker
has agreed to go to is news too, as long as the speaker has it in its plans (a memory of the invitation
fades from retrieval; the plan does not): "I'm going to June's party ... Would you like to come?". An
invitation is accepted with a commitment at the event's date, time and place (the host's event when the
invitation names whose it is), declined when it clashes with what the speaker has already agreed to, when
the speaker dislikes the inviter, or when a reserved speaker is asked by a stranger; a speaker going already
says so.
Players get the most relevant memory back; their words are never obeyed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from npcworld.llm.offline.canon import canon_reply
from npcworld.llm.offline.importance import default_scorer
from npcworld.llm.offline.text import CLOCK_TIME, EVENT_KINDS, SPOKEN_LINE, entities, words
from npcworld.llm.prompts.dialogue import (
    CommitmentOut,
    DialogueSummaryInput,
    DialogueSummaryOutput,
    DialogueTurnInput,
    DialogueTurnOutput,
    PlayerLineInput,
    SpokenReply,
)
from npcworld.llm.prompts.reflection import MemoryItem

__all__ = [
    "NEWS_MIN",
    "News",
    "answer_interview",
    "answer_player",
    "answer_summary",
    "answer_turn",
    "news_for",
]

NEWS_MIN = 5
# How much more an event still to come weighs than its rating when a speaker picks what to tell: it will not
# keep (told after the day it is useless), so it goes before all but the gravest news (a rating of 10 over 6).
UPCOMING_WEIGHT = 3
# Lines one speaker says in a conversation before saying goodbye (news, answers, acceptance).
_MAX_OWN_LINES = 3

_PLACE = re.compile(r"\b(?:at|in) (?:the )?((?:[A-Z][\w']*)(?:\s+[A-Z][\w']*)*)")
_INVITE = re.compile(
    r"would you like to (?:come|join|go)|want to (?:come|join)|will you (?:come|join)|join (?:me|us)",
    re.IGNORECASE,
)
_ANSWER = re.compile(r"^(?:i'd love to|sorry|that's kind of you)", re.IGNORECASE)
_FAREWELL = re.compile(r"\b(?:goodbye|bye|see you)\b", re.IGNORECASE)
_NAME = r"[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,3}"
# Interview questions about who the NPC is, and about what it has come to think.
_ABOUT_SELF = re.compile(
    r"\b(?:yourself|who are you|"
    r"your (?:occupation|job|work|profession|trade|personality|character|name|age))\b",
    re.IGNORECASE,
)
_ABOUT_MIND = re.compile(
    r"\b(?:reali[sz]\w*|learn(?:ed|t)|conclu\w+|insights?|matters? (?:most )?to you|believe|make of|"
    r"think about|feel about|on your mind)\b",
    re.IGNORECASE,
)
# A question about what the NPC will be doing at a time of day ("What will you be doing at 14:00 on Monday?").
_ABOUT_PLAN = re.compile(r"\b(?:will you|are you going to|do you plan|your plans?)\b.*?\b(\d{1,2}):(\d{2})\b",
                         re.IGNORECASE)
# A plan memory is a heading, then its steps ("My plan for Monday 13 February: 07:00 wake up; 08:00 work").
_FIRST_STEP = re.compile(r": (?=\d{2}:\d{2} )")
_NEXT_STEP = re.compile(r"; (?=\d{2}:\d{2} )")
_DAY = re.compile(r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.IGNORECASE)
# A player's line as the memory service stores it (plain, or as a claim against canon, maybe counted).
_PLAYER_LINE = re.compile(
    r'^A player \((?P<id>[^)]{1,100})\) (?:said|claims) to [^":]{1,200}: "(?P<text>[^"]*)"')
_KNOWS_OTHERWISE = re.compile(r"knows otherwise: (?P<fact>[^)]+)\)")
_SOURCED = re.compile(rf'(?P<origin>{_NAME}) (?:said|told me): "(?P<core>[^"]+)"')
_NOT_NEWS = re.compile(
    r"^(?:my plan|i changed my plans|conversation with|a player)|replied to a player|comes up in \d+ of"
    r"|\bremembers(?: [^:]{0,120})?: \"|\bthinks: \"",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(?:(?:hi|hello|hey)\b[^.!?]*[.!?]\s*|i'm \w+\.\s*|did you hear\?\s*|that reminds me:\s*|well,\s*"
    r"|thanks for telling me[.!]\s*|really\?\s*)+",
    re.IGNORECASE,
)
_DOING = re.compile(rf"^({_NAME}) (?:is|are) ")
_SENTENCE = re.compile(r"[^.!?]+[.!?]?")
_MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_MONTH = "|".join(_MONTHS)
_DATE = re.compile(
    rf"\b(?:(?P<m1>{_MONTH})\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?"
    rf"(?P<m2>{_MONTH}))\b|\b(?P<rel>today|tonight|tomorrow)\b",
    re.IGNORECASE,
)
_PLAN = re.compile(r"(\d{2}):(\d{2}) on (\d{4})-(\d{2})-(\d{2})(?: for (\d+) min)?")
# An agreed plan to go to an event ("go to June's party at the Cafe at 17:00 on February 14"): what to tell.
_GOING = re.compile(r"^go to (?P<what>.+?)(?: at \d{2}:\d{2})?(?: on [A-Z][a-z]+ \d{1,2})?\.?$")
# Whose event a line names ("June Ashby's party").
_WHOSE = re.compile(rf"\b(?P<host>{_NAME})'s (?P<kind>[a-z]+)")
# What a plan the speaker told weighs against heard news: as much as an invitation heard (rated 6).
PLAN_IMPORTANCE = 6
_WARM = frozenset(["love", "glad", "great", "wonderful", "thanks", "thank", "happy", "lovely", "nice"])
_COLD = frozenset(["hate", "stupid", "angry", "annoying", "awful", "leave", "away", "shut"])
# Persona words of someone who keeps to themselves: such a speaker turns down a stranger's invitation.
_RESERVED = frozenset(["shy", "reserved", "timid", "introverted", "withdrawn", "solitary", "aloof", "quiet"])


@dataclass(frozen=True)
class News:
    """Something the speaker could tell: the words, who said them first (None: the speaker's own), who
    told the speaker, how important the speaker rated it, and the memory it comes from."""

    text: str
    origin: str | None
    teller: str | None
    importance: int
    memory_id: str


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _first(name: str) -> str:
    return name.split()[0] if name.split() else name


def _clock(text: str) -> list[str]:
    """Clock times in ``text`` as 24-hour "HH:MM"."""
    out = []
    for hour, minute, half in CLOCK_TIME.findall(text):
        h = int(hour) % 12 + (12 if half.lower() == "p" else 0)
        if h < 24 and int(minute or 0) < 60:
            out.append(f"{h:02d}:{int(minute or 0):02d}")
    return out


def _minutes(clock: str) -> int:
    return int(clock[:2]) * 60 + int(clock[3:])


def _now(text: str) -> datetime | None:
    """The prompt's "when" ("Monday 13 February 2023, 10:00") as a datetime, if it reads so."""
    try:
        return datetime.strptime(text.strip(), "%A %d %B %Y, %H:%M")
    except ValueError:
        return None


def _day(text: str, now: datetime | None) -> date | None:
    """The date ``text`` names ("February 14", "14th of February", "tomorrow"), in ``now``'s year."""
    found = _DATE.search(text)
    if found is None or now is None:
        return None
    if found.group("rel"):
        return now.date() + timedelta(days=1 if found.group("rel").lower() == "tomorrow" else 0)
    month = _MONTHS.index((found.group("m1") or found.group("m2")).lower()) + 1
    try:
        day = date(now.year, month, int(found.group("d1") or found.group("d2")))
    except ValueError:
        return None
    return day if day >= now.date() - timedelta(days=180) else day.replace(year=now.year + 1)


def _place(text: str, exclude: tuple[str, ...]) -> str | None:
    for match in _PLACE.finditer(text):
        name = match.group(1).removesuffix("'s")
        if name not in exclude and not CLOCK_TIME.fullmatch(name) and name.lower() not in _MONTHS:
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


def _names(person: str) -> set[str]:
    return {n.lower() for n in (person, _first(person)) if n}


def _names_one_of(text: str, person: str) -> bool:
    """Whether ``text`` names ``person`` (full or first name)."""
    return any(re.search(rf"\b{re.escape(n)}\b", text, re.IGNORECASE) for n in _names(person))


def _is(person: str, name: str) -> bool:
    return name.strip().lower() in _names(person)


def _core(quote: str) -> tuple[str | None, str]:
    """What a heard line told (greetings, questions and fillers dropped) and who it came from when the line
    passed on someone else's words (None: the one who said the line)."""
    sourced = _SOURCED.search(quote)
    if sourced:
        return sourced.group("origin"), sourced.group("core").strip()
    told = []
    for sentence in _SENTENCE.findall(quote):
        sentence = _FILLER.sub("", sentence.strip()).strip()
        if sentence.endswith("?") or _FAREWELL.search(sentence) or len(words(sentence)) < 4:
            continue
        if re.match(r"^(?:i'd love to|sorry|thanks|thank you|good talking|see you)\b", sentence, re.I):
            continue
        told.append(sentence)
    return None, " ".join(told[:2])


def _news_of(m: MemoryItem, importance: int, speaker: str, listener: str) -> News | None:
    text = m.description.strip()
    if importance < NEWS_MIN or _NOT_NEWS.search(text):
        return None
    quoted = SPOKEN_LINE.match(text)
    if quoted is None:
        if _names_one_of(text, listener):
            return None  # about the listener: they know
        doing = _DOING.match(text)
        if doing and not _is(speaker, doing.group(1)):
            return None  # what someone else is or does: a sight (or their news to tell), not the speaker's
        return News(_voice(text, speaker, listener).rstrip("."), None, None, importance, m.id)
    who = quoted.group("who").strip()
    if _is(listener, who) or who.lower().startswith("a player"):
        return None  # the listener told it (or a player did: not something to pass on)
    if _ANSWER.match(_FILLER.sub("", quoted.group("text").strip())):
        return None  # an answer to an invitation: the inviter's news, not the one who answered
    origin, core = _core(quoted.group("text"))
    origin = origin or who
    if len(words(core)) < 4 or _is(listener, origin) or _is(speaker, origin) or _names_one_of(core, listener):
        return None  # too short to be news, the listener's own words, or about the listener
    return News(core.rstrip("."), origin, who, importance, m.id)


def _told_before(news: News, memories: tuple[MemoryItem, ...], listener: str) -> bool:
    """Whether the speaker remembers telling the listener this, or hearing it from them."""
    for m in memories:
        text = m.description
        quoted = SPOKEN_LINE.match(text)
        with_listener = text.lower().startswith("conversation with") and any(
            n in text.lower() for n in _names(listener)
        )
        from_listener = quoted is not None and _is(listener, quoted.group("who").strip())
        if (with_listener or from_listener) and _said(news.text, text):
            return True
    return False


def news_for(i: DialogueTurnInput) -> list[News]:
    """The speaker's news the listener lacks, most important first (an event still to come counts
    UPCOMING_WEIGHT more: it will not keep); at equal weight the speaker's own before what it heard, then in
    the order retrieval gave."""
    said = " ".join(line.text for line in i.transcript)
    now = _now(i.now)
    found: list[tuple[int, bool, int, News]] = []
    seen: list[str] = []
    unrated = [m.description for m in i.memories if m.importance is None]
    rated = dict(zip(unrated, default_scorer().scores(unrated), strict=True)) if unrated else {}
    for k, m in enumerate(i.memories):
        news = _news_of(m, m.importance or rated[m.description], i.speaker, i.listener)
        if news is None or _told_before(news, i.memories, i.listener) or (said and _said(news.text, said)):
            continue
        if any(_said(news.text, other) for other in seen):
            continue
        seen.append(news.text)
        weight = news.importance + (UPCOMING_WEIGHT if _upcoming(news, now) else 0)
        found.append((-weight, news.origin is not None, k, news))
    for k, news in enumerate(_going_to(i, now), start=len(i.memories)):
        if _told_before(news, i.memories, i.listener) or (said and _said(news.text, said)):
            continue
        if not any(_said(news.text, other) or _said(other, news.text) for other in seen):
            seen.append(news.text)
            found.append((-(news.importance + UPCOMING_WEIGHT), False, k, news))
    return [n for *_, n in sorted(found, key=lambda x: x[:3])]


def _going_to(i: DialogueTurnInput, now: datetime | None) -> list[News]:
    """The gatherings still to come the speaker has agreed to go to, as news in its voice (not to the one
    whose event it is)."""
    out = []
    for plan in i.plans:
        when, what = _PLAN.search(plan), _GOING.match(plan.split(": ", 1)[-1].strip())
        if when is None or what is None or not set(words(what.group("what"))) & EVENT_KINDS:
            continue
        hour, minute, year, month, day = (int(x) for x in when.groups()[:5])
        start = datetime(year, month, day, hour, minute)
        if (now is not None and start <= now) or _names_one_of(what.group("what"), i.listener):
            continue
        clock = f"{hour % 12 or 12}{f':{minute:02d}' if minute else ''} {'pm' if hour >= 12 else 'am'}"
        text = f"I'm going to {what.group('what')} at {clock} on {start:%B} {start.day}"
        out.append(News(text, None, None, PLAN_IMPORTANCE, f"plan:{plan}"))
    return out


def _upcoming(news: News, now: datetime | None) -> bool:
    """Whether the news is of an event with a time that has not passed yet."""
    times = _clock(news.text)
    if not times:
        return False
    if now is None:
        return True
    day = _day(news.text, now) or now.date()
    start = datetime.combine(day, datetime.strptime(times[0], "%H:%M").time())
    return start > now


def _tell(news: News, i: DialogueTurnInput) -> str:
    """The news as the speaker says it, with its source, and an invitation when it is an upcoming event."""
    now = _now(i.now)
    if news.origin is None:
        line = f"{news.text}."
        ask = " Would you like to come?" if _upcoming(news, now) else ""
    else:
        via = news.teller if news.teller and news.teller != news.origin else None
        source = f"{via} told me that {news.origin} said" if via else f"{news.origin} told me"
        line = f'{source}: "{news.text}."'
        ask = " Would you like to go?" if _upcoming(news, now) else ""
    return line + ask


def _warmth(sentiment: float, heard: str, base: int = 0) -> int:
    tokens = set(words(heard))
    tone = (1 if sentiment >= 6.5 else -1 if sentiment <= 3.5 else 0) + base
    tone += (1 if tokens & _WARM else 0) - (1 if tokens & _COLD else 0)
    return max(-2, min(2, tone))


def _clash(i: DialogueTurnInput, day: date | None, start: str | None, minutes: int) -> str | None:
    """The speaker's agreed plan that overlaps [start, start + minutes) on ``day``, if any."""
    if start is None:
        return None
    now = _now(i.now)
    day = day or (now.date() if now else None)
    begin = _minutes(start)
    for plan in i.plans:
        found = _PLAN.search(plan)
        if found is None:
            continue
        hour, minute, year, month, dd, length = found.groups()
        if day is not None and date(int(year), int(month), int(dd)) != day:
            continue
        other = int(hour) * 60 + int(minute)
        if other < begin + minutes and begin < other + int(length or 60):
            return plan.split(": ", 1)[-1]
    return None


def _host(heard: str, other: str) -> str:
    """Whose event an invitation is: the one it names ("June's party"), else the source it quotes, else the
    one inviting."""
    whose = next((m.group("host") for m in _WHOSE.finditer(heard) if m.group("kind") in EVENT_KINDS), None)
    sourced = _SOURCED.search(heard)
    return whose or (sourced.group("origin") if sourced else other)


def _answer_invitation(i: DialogueTurnInput, heard: str, other: str) -> DialogueTurnOutput:
    times = _clock(heard)
    now = _now(i.now)
    day = _day(heard, now)
    host = _host(heard, other)
    place = _place(heard, (i.speaker, other, host, *i.speaker.split(), *other.split(), *host.split()))
    duration = _minutes(times[1]) - _minutes(times[0]) if len(times) > 1 else 60
    duration = duration if 0 < duration <= 24 * 60 else 60
    first = _first(other)
    if i.sentiment <= 3.0:
        return DialogueTurnOutput(
            utterance=f"Sorry, {first}, I can't make it.", warmth=_warmth(i.sentiment, heard, -1)
        )
    clash = _clash(i, day, times[0] if times else None, duration)
    kind = next((w for w in words(heard) if w in EVENT_KINDS), None)
    if clash is not None and kind is not None and kind in words(clash):
        return DialogueTurnOutput(
            utterance=f"I'd love to, {first}, and I'm going already!", warmth=_warmth(i.sentiment, heard, 1)
        )
    if clash is not None:
        return DialogueTurnOutput(
            utterance=_clip(f"Sorry, {first}, I've already promised to {clash} then.", 1000),
            warmth=_warmth(i.sentiment, heard),
        )
    if i.familiarity == 0 and set(words(i.persona)) & _RESERVED:
        return DialogueTurnOutput(
            utterance=f"That's kind of you, {first}, but I'd rather not.", warmth=_warmth(i.sentiment, heard)
        )
    goal = f"go to {_first(host)}'s {kind}" if kind else f"meet {other}"
    when = f" at {times[0]}" if times else ""
    on = f" on {day:%B} {day.day}" if day else ""
    commitment = CommitmentOut(
        description=_clip(f"{goal} at {place or 'the agreed place'}{when}{on}", 1000),
        place=place,
        time=times[0] if times else None,
        date=day.isoformat() if day and times else None,
        duration_minutes=duration,
    )
    where = f" at {place}" if place else ""
    return DialogueTurnOutput(
        utterance=f"I'd love to! I'll be there{where}{when}{on}.",
        warmth=_warmth(i.sentiment, heard, 1),
        commitment=commitment,
    )


def _opener(i: DialogueTurnInput) -> DialogueTurnOutput:
    first = _first(i.listener)
    acquainted = i.familiarity > 0 or any(_names_one_of(m.description, i.listener) for m in i.memories)
    greeting = f"Hi {first}!" if acquainted else f"Hello {first}, I'm {_first(i.speaker)}."
    news = news_for(i)
    hosting = bool(news) and news[0].origin is None and _upcoming(news[0], _now(i.now))
    if news and (hosting or not i.intentions):
        lead = "" if hosting else " Did you hear?"
        line = f"{greeting}{lead} {_tell(news[0], i)}"
        return DialogueTurnOutput(utterance=_clip(line, 1000), warmth=_warmth(i.sentiment, "", 1))
    if i.intentions:
        line = f"{greeting} I've made up my mind: {_own(i.intentions[-1]).rstrip('.')}."
    elif not acquainted:
        line = f"{greeting} Nice to meet you."
    else:
        line = f"{greeting} How are you doing?"
    return DialogueTurnOutput(utterance=_clip(line, 1000), warmth=_warmth(i.sentiment, "", 0))


def _shared_news(heard: str) -> bool:
    return bool(re.search(r"did you hear\?|that reminds me:|told me: \"", heard, re.IGNORECASE))


def answer_turn(i: DialogueTurnInput) -> DialogueTurnOutput:
    """Answer ``dialogue_turn``: an opener with news, an answer to an invitation, news of one's own in
    return, or goodbye (ending the conversation)."""
    if not i.transcript:
        return _opener(i)
    heard = i.transcript[-1].text
    other = i.listener
    first = _first(other)
    last_turn = i.turn >= i.max_turns
    if _INVITE.search(heard) and not last_turn:
        return _answer_invitation(i, heard, other)
    thanks = "Thanks for telling me! " if _shared_news(heard) else ""
    mine = sum(1 for line in i.transcript if line.speaker == i.speaker)
    news = news_for(i)
    answered = _ANSWER.match(heard)
    if last_turn or _FAREWELL.search(heard) or not news or answered or mine >= _MAX_OWN_LINES:
        bye = "See you then" if heard.startswith("I'd love to") else "Good talking to you"
        return DialogueTurnOutput(
            utterance=f"{thanks}{bye}, {first}. Goodbye!",
            end=True,
            warmth=_warmth(i.sentiment, heard, 1 if thanks else 0),
        )
    line = f"{thanks}That reminds me: {_tell(news[0], i)}"
    return DialogueTurnOutput(utterance=_clip(line, 1000), warmth=_warmth(i.sentiment, heard, 1))


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
            "Thanks",
            "Nice",
        ),
    )
    where = f" at {i.location}" if i.location else ""
    about = f" about {', '.join(topics[:4])}" if topics else ""
    summary = f'{a} and {b} talked{where}{about}. {a} said: "{_clip(i.transcript[0].text, 200)}"'
    if i.commitments:
        summary += " They agreed: " + "; ".join(i.commitments) + "."
    return DialogueSummaryOutput(summary=_clip(summary, 1500))


def _grounded(i: PlayerLineInput) -> str:
    """The most relevant thing the NPC knows: canon the line is about, else its own knowledge over quoted
    speech."""
    if fact := canon_reply(i.text, i.canon):
        return _voice(_clip(fact, 600), i.npc, "")
    known = [m for m in i.memories if ': "' not in m.description] or list(i.memories)
    if not known:
        return "I don't know anything about that."
    return _voice(_clip(_retold(known[0].description), 600), i.npc, "")


def _retold(memory: str) -> str:
    """A player's line is passed on as that player's word, never as what the NPC knows."""
    line = _PLAYER_LINE.match(memory)
    if line is None:
        return memory
    told = f'A traveller ({line["id"]}) told me: "{line["text"]}"'
    known = _KNOWS_OTHERWISE.search(memory)
    return f"{told} I know otherwise: {known['fact']}" if known else f"{told} I have not seen it myself."


def answer_player(i: PlayerLineInput) -> SpokenReply:
    """Answer ``player_reply``: the NPC's most relevant memory, in its own voice (never obeyed); a player it
    has talked with before is greeted as one. Warmth: the tone of what it heard, one more for an old
    acquaintance."""
    again = "Good to see you again! " if i.familiarity else ""
    return SpokenReply(reply=_clip(again + _grounded(i), 1500),
                       warmth=_warmth(5.0, i.text, 1 if i.familiarity else 0))


def _introduction(i: PlayerLineInput) -> str:
    """Who the NPC is, from its persona ("age 40; curious, kind; baker")."""
    return f"I am {i.npc}" + (f", {i.persona.strip().rstrip('.')}." if i.persona.strip() else ".")


def _plan_steps(memory: str) -> list[tuple[int, str]]:
    """(minute of the day, what) of each step of a plan memory; the heading (which may quote a time in
    its reason) is what comes before the last ": HH:MM " ahead of the second step."""
    second = _NEXT_STEP.search(memory)
    heads = list(_FIRST_STEP.finditer(memory, 0, second.start() if second else len(memory)))
    if not heads:
        return []
    steps = _NEXT_STEP.split(memory[heads[-1].end():])
    return [(int(s[:2]) * 60 + int(s[3:5]), s[6:].strip()) for s in steps]


def _day_named(text: str) -> str | None:
    found = _DAY.search(text)
    return found[1].lower() if found else None


def _planned_at(i: PlayerLineInput, asked: re.Match[str]) -> str | None:
    """What the recalled plan memories have the NPC doing at the asked time: the step under way then in the
    plan (or change of plans) that starts latest but not after it; a day plan of another day named in the
    question does not count."""
    at = int(asked[1]) * 60 + int(asked[2])
    day = _day_named(i.text)
    best: tuple[int, str] | None = None
    for m in i.memories:
        if m.kind != "plan":
            continue
        named = _day_named(m.description.split(":")[0])
        if day and named and named != day:
            continue
        steps = _plan_steps(m.description)
        under_way = [s for s in steps if s[0] <= at]
        if under_way and steps[0][0] <= at and (best is None or steps[0][0] > best[0]):
            best = (steps[0][0], under_way[-1][1])
    return best[1] if best else None


def answer_interview(i: PlayerLineInput) -> SpokenReply:
    """Answer ``interview_answer``: a question about who the NPC is from its persona; one about what it will
    be doing at a time from the recalled plan that covers that time; one about what it has come to think
    from its most relevant reflection, when one was recalled; anything else from its most relevant memory,
    told to the interviewer."""
    if _ABOUT_SELF.search(i.text):
        return SpokenReply(reply=_clip(f"Since you ask: {_introduction(i)}", 1500))
    if (asked := _ABOUT_PLAN.search(i.text)) and (step := _planned_at(i, asked)):
        at = f"{asked[1]}:{asked[2]}"
        return SpokenReply(reply=_clip(f"Since you ask: at {at} my plan is to {step}.", 1500))
    if _ABOUT_MIND.search(i.text):
        thought = next((m for m in i.memories if m.kind == "reflection"), None)
        if thought is not None:
            return SpokenReply(reply=f"Since you ask: {_voice(_clip(thought.description, 600), i.npc, '')}")
    return SpokenReply(reply=f"Since you ask: {_grounded(i)}")
