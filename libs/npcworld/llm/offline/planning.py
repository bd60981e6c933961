"""Offline planning: a day outline shaped by the persona's occupation, places and goals; hour chunks and
5-15 minute actions named after their block; react to emergencies, to people the NPC knows, to anyone the
NPC has yet to invite to an event it hosts and, out among people, to strangers."""

from __future__ import annotations

import re
import zlib

from npcworld.llm.offline.text import CLOCK_TIME, EVENT_KINDS, words
from npcworld.llm.prompts.planning import (
    ActionProposal,
    BlockProposal,
    Person,
    PlanActionsInput,
    PlanActionsOutput,
    PlanDayInput,
    PlanDayOutput,
    PlanHoursInput,
    PlanHoursOutput,
    ReactionInput,
    ReactionOutput,
)

__all__ = ["answer_actions", "answer_day", "answer_hours", "answer_reaction"]

_WAKE = re.compile(r"wakes? up (?:at|around) (\d{1,2})(?::(\d\d))?\s*(am|pm)?", re.I)
_BED = re.compile(r"(?:goes|go) to (?:bed|sleep) (?:at|around) (\d{1,2})(?::(\d\d))?\s*(am|pm)?", re.I)
_URGENT = frozenset({"fire", "burning", "smoke", "hurt", "injured", "fell", "fallen", "broken", "flood",
                     "flooding", "help", "scream", "screaming", "thief", "stolen", "emergency", "bleeding",
                     "collapsed"})
_EMOJI = (("coffee", "☕"), ("cafe", "☕"), ("breakfast", "🍳"), ("lunch", "🍽"), ("dinner", "🍽"),
          ("paint", "🎨"), ("sleep", "😴"), ("bed", "😴"), ("read", "📖"), ("book", "📖"), ("walk", "🚶"),
          ("talk", "💬"), ("meet", "🤝"), ("party", "🎉"), ("mayor", "🗳"), ("campaign", "🗳"),
          ("shop", "🛒"), ("cook", "🍳"), ("clean", "🧹"), ("work", "💼"), ("wake", "🌅"), ("relax", "🛋"))
_STEPS = ("getting started", "in the thick of it", "making progress", "nearly done")
# Kinds of place where people eat out, and where people spend an evening among others.
_EATERIES = frozenset({"cafe", "café", "restaurant", "diner", "pub", "inn", "tavern", "canteen", "bistro",
                       "bakery", "bar"})
_SOCIAL = _EATERIES | {"park", "square", "plaza", "market", "club"}
# What an NPC is doing when it is out among people (words of the offline day plan's blocks).
_SOCIAL_TIME = frozenset({"lunch", "out", "party", "celebration", "festival"})
# Persona words of someone who keeps to themselves (spends evenings at home).
_RESERVED = frozenset({"shy", "reserved", "timid", "introverted", "withdrawn", "solitary", "aloof", "quiet"})


def _clock(minutes: int) -> str:
    minutes = max(0, min(minutes, 23 * 60 + 59))
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _minutes(clock: str) -> int:
    hours, mins = clock.split(":")
    return int(hours) * 60 + int(mins)


def _time_in(pattern: re.Pattern[str], text: str, default: int) -> int:
    found = pattern.search(text)
    if not found:
        return default
    hour, mins, half = int(found.group(1)), found.group(2), (found.group(3) or "").lower()
    if half:
        hour = hour % 12 + (12 if half == "pm" else 0)
    return min(hour, 23) * 60 + int(mins or 0)


def _best_place(places: tuple[str, ...], text: str) -> str:
    wanted = set(words(text))
    scored = [(len(wanted & set(words(p))), -i) for i, p in enumerate(places)]
    best = max(scored)
    return places[-best[1]] if best[0] else places[0]


def _pick(places: list[str], key: str) -> str | None:
    """One of ``places``, chosen by a stable hash of ``key`` (so NPCs spread over them, day by day)."""
    return places[zlib.crc32(key.encode()) % len(places)] if places else None


def _of_kind(places: tuple[str, ...], kinds: frozenset[str]) -> list[str]:
    """One place per site ("Site: area") whose site names one of ``kinds``: its first area by name, so
    everyone who goes there meets in the same area."""
    sites: dict[str, str] = {}
    for place in sorted(places):
        site = place.split(":")[0]
        if set(words(site)) & kinds:
            sites.setdefault(site, place)
    return list(sites.values())


def _goal_text(goal: str) -> str:
    text = re.sub(r"^(you|i)\s+(will|must|should|are going to|am going to)\s+", "", goal.strip(), flags=re.I)
    return text.rstrip(".!") or goal


def _full_day(inputs: PlanDayInput, wake: int, bed: int) -> list[tuple[int, int, str, str]]:
    home = inputs.places[0]
    job = inputs.persona.split(";")[0]
    occupation = re.search(r"occupation: ([^;]+)", inputs.persona)
    work_place = _best_place(inputs.places, occupation.group(1) if occupation else job)
    work = f"work as {occupation.group(1).strip()}" if occupation else "get on with the day's errands"
    goals = [_goal_text(g) for g in inputs.goals[:2]]
    evening = max(17 * 60, wake + 4 * 60)
    key = f"{inputs.npc_name}|{inputs.date}"
    lunch_place = _pick(_of_kind(inputs.places, _EATERIES), key) or work_place
    plan = [(wake, wake + 60, "wake up, wash and have breakfast", home),
            (wake + 60, 12 * 60, f"morning: {work}", work_place),
            (12 * 60, 13 * 60, "have lunch", lunch_place),
            (13 * 60, evening, f"afternoon: {work}", work_place)]
    cursor = evening
    for goal in goals:
        plan.append((cursor, cursor + 60, f"work towards my goal: {goal}", _best_place(inputs.places, goal)))
        cursor += 60
    plan.append((cursor, cursor + 60, "have dinner", home))
    cursor += 60
    out = _pick(_of_kind(inputs.places, _SOCIAL), key[::-1])
    if out and not set(words(inputs.persona)) & _RESERVED and not goals and bed - cursor > 150:
        plan.append((cursor, cursor + 120, "spend the evening out among people", out))
        cursor += 120
    plan.append((cursor, bed, "relax and wind down", home))
    return [(s, e, d, p) for s, e, d, p in plan if e > s]


def answer_day(inputs: PlanDayInput) -> PlanDayOutput:
    """Answer ``plan_day``: wake-up and bed time from the persona's lifestyle (default 7:00 and 23:00), then
    morning and afternoon at the place the occupation names with lunch at a place to eat out (when the NPC
    knows one; chosen by a stable hash of name and date, so NPCs spread over them), an hour per goal, dinner
    at home and, for an NPC who is not reserved and has no goals, two hours out at a social place (chosen
    the same way) before the evening at home; a revision keeps what lies after ``from_time``, goals first."""
    wake = _time_in(_WAKE, inputs.persona, 7 * 60)
    bed = _time_in(_BED, inputs.persona, 23 * 60)
    bed = bed if bed > wake + 8 * 60 else 23 * 60
    plan = _full_day(inputs, wake, bed)
    if inputs.from_time is not None:
        start = _minutes(inputs.from_time)
        goals = [(s, e, d, p) for s, e, d, p in plan if d.startswith("work towards")]
        rest = [(max(s, start), e, d, p) for s, e, d, p in plan if e > start and (s, e, d, p) not in goals]
        cursor, plan = start, []
        for _, _, d, p in goals:
            plan.append((cursor, cursor + 60, d, p))
            cursor += 60
        plan += [(max(s, cursor), e, d, p) for s, e, d, p in rest if e > cursor]
        plan = plan or [(start, max(bed, start + 15), "relax and wind down", inputs.places[0])]
    blocks = tuple(BlockProposal(start=_clock(s), duration_minutes=max(5, e - s), description=d, place=p)
                   for s, e, d, p in plan[:8])
    return PlanDayOutput(wake_up=_clock(wake), bed_time=_clock(bed), blocks=blocks)


def answer_hours(inputs: PlanHoursInput) -> PlanHoursOutput:
    """Answer ``plan_hours``: a block of one chunk keeps its name; longer blocks begin, go on and finish."""
    blocks = [s.block for s in inputs.slots]
    chunks: list[str] = []
    for i, block in enumerate(blocks):
        first = i == 0 or blocks[i - 1] != block
        last = i == len(blocks) - 1 or blocks[i + 1] != block
        if first and last:
            chunks.append(block)
        elif first:
            chunks.append(f"begin: {block}")
        elif last:
            chunks.append(f"finish: {block}")
        else:
            run = sum(1 for b in reversed(blocks[:i]) if b == block)
            chunks.append(f"{block} (hour {run + 1})")
    return PlanHoursOutput(chunks=tuple(c[:500] for c in chunks))


def _emoji(text: str) -> str:
    tokens = words(text)
    for key, emoji in _EMOJI:
        if any(t.startswith(key) for t in tokens):
            return emoji
    return "🙂"


def answer_actions(inputs: PlanActionsInput) -> PlanActionsOutput:
    """Answer ``plan_actions``: the task in steps of at most 15 minutes. The object whose name shares a word
    with the task is used (else the place's objects in turn on the middle steps), left "in use: <task>"."""
    task_words = set(words(inputs.task))
    matching = [o for o in inputs.objects if task_words & set(words(o))]
    count = max(1, -(-inputs.minutes // 15))
    actions = []
    for i in range(count):
        step = "wrapping up" if i == count - 1 and count > 1 else _STEPS[min(i, len(_STEPS) - 1)]
        description = inputs.task if count == 1 else f"{inputs.task}: {step}"
        minutes = inputs.minutes - 15 * (count - 1) if i == count - 1 else 15
        # the object the task names; else, on the middle steps, the objects at the place in turn
        obj = matching[0] if matching else (
            inputs.objects[i % len(inputs.objects)] if inputs.objects and 0 < i < count - 1 else None)
        if obj and not matching:
            description = f"{description}, using the {obj}"
        state = f"in use: {inputs.task}"[:400] if obj else None
        actions.append(ActionProposal(description=description[:500], duration_minutes=max(5, minutes),
                                      emoji=_emoji(inputs.task), object=obj, object_state=state))
    return PlanActionsOutput(actions=tuple(actions))


def _hosted(inputs: ReactionInput) -> str | None:
    """The kind of event the NPC hosts ("party"), if its persona says so: a clause with the NPC as its
    subject that names a kind of gathering and a clock time ("Marta is planning a party ... from 5 pm")."""
    name = words(inputs.npc_name)
    for clause in re.split(r";|\.\s+(?=[A-Z])", inputs.persona):
        tokens = words(clause)
        kinds = [t for t in tokens if t in EVENT_KINDS]
        subject = tokens[: len(name)] == name or tokens[:1] == name[:1]
        if kinds and subject and CLOCK_TIME.search(clause):
            return kinds[0]
    return None


def _invited(person: Person, kind: str | None, relationship: tuple[str, ...]) -> bool:
    """Whether a remembered relationship memory has the NPC and ``person`` on the event already (an
    invitation told, or news of it heard from them)."""
    first = words(person.name)[:1]
    return bool(first) and any(kind in tokens and first[0] in tokens for tokens in map(words, relationship))


def answer_reaction(inputs: ReactionInput) -> ReactionOutput:
    """Answer ``plan_reaction``: react to an emergency; unless already talking, a host who is not reserved
    invites a listed person it has not invited yet, at work too (the paper's host spends the day inviting),
    anyone talks to a listed person whom a remembered relationship memory names, and out among people
    someone who is not reserved says hello to a stranger; otherwise carry on."""
    seen = inputs.observation
    if _URGENT & set(words(seen)):
        return ReactionOutput(react=True, reaction=f"deal with it: {seen}"[:500], duration_minutes=15,
                              emoji="🚨", reason="it looks like an emergency")
    doing = set(words(inputs.current_activity))
    # in a conversation already (one it was asked into, or one it started: a talk, an invitation, a hello)
    talking = {"talk", "talking", "chat", "chatting", "conversation", "invite", "hello"} & doing
    sociable = not set(words(inputs.persona)) & _RESERVED
    kind = _hosted(inputs) if sociable and not talking else None
    guests = [p for p in inputs.people if not _invited(p, kind, inputs.relationship)] if kind else []
    if kind and guests:
        guest = guests[0]
        return ReactionOutput(react=True, reaction=f"invite {guest.name} to my {kind}"[:500],
                              duration_minutes=10, emoji="💌", talk_to=guest.npc_id,
                              reason=f"{inputs.npc_name} wants {guest.name} at the {kind}")
    known = [p for p in inputs.people
             if any(set(words(p.name)) & set(words(memory)) for memory in inputs.relationship)]
    if known and not talking:
        person = known[0]
        return ReactionOutput(react=True, reaction=f"talk with {person.name} about what they are doing"[:500],
                              duration_minutes=10, emoji="💬", talk_to=person.npc_id,
                              reason=f"{inputs.npc_name} knows {person.name}")
    # Out among people (a meal out, an evening out, a party) someone who is not reserved says hello to a
    # stranger; the next time they meet, they are acquaintances.
    if inputs.people and not talking and sociable and doing & _SOCIAL_TIME:
        person = inputs.people[0]
        return ReactionOutput(react=True, reaction=f"say hello to {person.name}"[:500], duration_minutes=10,
                              emoji="👋", talk_to=person.npc_id,
                              reason=f"{inputs.npc_name} meets {person.name} while out")
    return ReactionOutput(react=False, reason="nothing that calls for a change of plan")
