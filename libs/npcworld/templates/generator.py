"""Generated towns: a template of 25 to 10,000 NPCs from a count and a seed (the same pair, the same town).

Homes and workplaces on a tile map, distinct personas with daily routines and relationships, and the two
stories planted on people the town happens to hold: a cafe's owner plans a Valentine's Day party there, and a
business owner runs for mayor. ``town-<npcs>-<seed>`` names a generated town wherever a template name is
taken: every process that loads the name builds the same town.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from npcworld.templates import _town_data as data
from npcworld.templates._town_layout import Rooms, grid_for, lot_origin, lot_sector, map_size, streets_sector

__all__ = ["MAX_NPCS", "MIN_NPCS", "generate_town", "generated_name", "parse_generated"]

MIN_NPCS, MAX_NPCS = 25, 10_000
_NAME = re.compile(r"^town-(\d{1,5})-(\d{1,9})$")
_START = "2023-02-13T07:00:00+00:00"
_PARTY = ("2023-02-14T17:00:00+00:00", "2023-02-14T19:00:00+00:00")
_HOME_ROOMS: Rooms = (("kitchen", ("stove", "fridge", "kitchen table")),
                      ("bedroom", ("bed", "desk", "wardrobe")))
_HOUSEHOLD_SIZES = (1, 1, 2, 2, 2, 2, 3, 3, 4, 5)
_STREET_KINDS = ("Street", "Lane", "Road", "Avenue", "Row", "Way")
_PLEDGES = ("the river footbridge rebuilt and the bus to run on Sundays", "a new roof for the library",
            "lower rents for the shops on the high street", "a summer market on the green",
            "more streetlights on the footpaths", "the old mill turned into a community hall")


def generated_name(npcs: int, seed: int) -> str:
    """The template name of the town ``generate_town(npcs, seed)`` builds."""
    return f"town-{npcs}-{seed}"


def parse_generated(name: str) -> tuple[int, int] | None:
    """(npcs, seed) when ``name`` names a generated town of a size in range, else None."""
    found = _NAME.match(name)
    if not found:
        return None
    npcs, seed = int(found.group(1)), int(found.group(2))
    return (npcs, seed) if MIN_NPCS <= npcs <= MAX_NPCS else None


@dataclass
class _Site:
    name: str
    kind: str
    rooms: Rooms
    walls: bool = True
    jobs: tuple[str, ...] = ()
    ages: tuple[int, int] = (22, 66)
    people: list[_Person] = field(default_factory=list)
    origin: tuple[int, int] = (0, 0)
    street: str = ""

    def place(self, room: int = 0) -> str:
        return f"{self.name}:{self.rooms[room][0]}"


@dataclass
class _Person:
    job: str
    work: _Site
    head: bool
    age: int
    female: bool = False
    first: str = ""
    surname: str = ""
    npc_id: str = ""
    home: _Site | None = None
    lines: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.first} {self.surname}"

    def say(self, line: str) -> None:
        if line not in self.lines:
            self.lines.append(line)


class _Names:
    """Distinct place names, full names and NPC ids, drawn from the word lists."""

    def __init__(self, rng: random.Random, town: str) -> None:
        self.rng, self.town = rng, town
        self.places: set[str] = set()
        self.people: set[str] = set()

    def place(self, patterns: tuple[str, ...]) -> str:
        rng = self.rng
        name = ""
        for _ in range(40):
            name = rng.choice(patterns).format(
                surname=rng.choice(data.SURNAMES), animal=rng.choice(data.ANIMALS),
                street=rng.choice(data.STREET_NAMES), town=self.town)
            if name not in self.places:
                break
        else:
            name = f"{name} {len(self.places)}"  # nothing drawn ends in a number: unique
        self.places.add(name)
        return name

    def person(self, p: _Person, surname: str | None) -> None:
        firsts = data.FEMALE_NAMES if p.female else data.MALE_NAMES
        for attempt in range(10**6):
            family = surname if attempt < 100 else None  # the family's first names all taken: another surname
            p.first, p.surname = self.rng.choice(firsts), family or self.rng.choice(data.SURNAMES)
            p.npc_id = re.sub(r"[^a-z0-9]+", "-", p.name.lower()).strip("-")
            if p.npc_id not in self.people:
                self.people.add(p.npc_id)
                return
        raise ValueError("no distinct name left")  # 33,000 first-name and surname pairs: never reached


def _workplaces(rng: random.Random, names: _Names, npcs: int) -> list[_Site]:
    """The cafe, pub, grocery, town hall and park every town has, then drawn kinds until all have jobs."""
    kinds = list(data.WORKPLACES[:5])
    drawn = [w for w in data.WORKPLACES if w.kind != "hall"]
    while sum(len(k.jobs) for k in kinds) < npcs:
        kinds.append(rng.choice(drawn))
    return [_Site(names.place(k.names), k.kind, k.rooms, k.walls, k.jobs, k.ages) for k in kinds]


def _age(rng: random.Random, site: _Site, job: str, head: bool) -> int:
    if job.startswith("student"):
        return rng.randint(18, 24)
    if job.startswith("volunteer"):
        return rng.randint(64, 85)
    return rng.randint(30 if head else site.ages[0], min(site.ages[1], 67))


def _hire(rng: random.Random, sites: list[_Site], npcs: int) -> list[_Person]:
    """Every workplace's first job, then every second one …, until there are ``npcs`` people."""
    people: list[_Person] = []
    for slot in range(max(len(s.jobs) for s in sites)):
        for site in sites:
            if slot < len(site.jobs) and len(people) < npcs:
                job = site.jobs[slot].format(place=site.name)
                person = _Person(job, site, slot == 0, _age(rng, site, job, slot == 0))
                site.people.append(person)
                people.append(person)
    return people


def _households(rng: random.Random, names: _Names, people: list[_Person]) -> list[list[_Person]]:
    """Homes of one to five: the oldest, a partner of about the same age, grown children, housemates."""
    pool = people[:]
    rng.shuffle(pool)
    households: list[list[_Person]] = []
    while pool:
        size = min(len(pool), rng.choice(_HOUSEHOLD_SIZES))
        members, pool = sorted(pool[:size], key=lambda p: -p.age), pool[size:]
        head = members[0]
        head.female = rng.random() < 0.5
        names.person(head, None)
        for p in members[1:]:
            partner = p is members[1] and abs(head.age - p.age) <= 12
            child = not partner and head.age - p.age >= 18
            p.female = not head.female if partner and rng.random() < 0.9 else rng.random() < 0.5
            names.person(p, head.surname if partner or child else None)
            if partner:
                head.say(f"{head.first} is married to {p.name}")
                p.say(f"{p.first} is married to {head.name}")
            elif child:
                head.say(f"{head.first} is the {'mother' if head.female else 'father'} of {p.name}")
                p.say(f"{p.first} is the {'daughter' if p.female else 'son'} of {head.name}")
            else:
                head.say(f"{head.first} shares a house with {p.name}")
                p.say(f"{p.first} shares a house with {head.name}")
        households.append(members)
    return households


def _lay_out(rng: random.Random, sites: list[_Site]) -> tuple[int, int, list[str]]:
    """Shuffle the lots over the grid; returns the map's width and height and its streets (one per row)."""
    rng.shuffle(sites)
    cols, rows = grid_for(len(sites))
    streets = [f"{n} {k}" for n in data.STREET_NAMES for k in _STREET_KINDS]
    rng.shuffle(streets)
    for i, site in enumerate(sites):
        x, y, row = lot_origin(i, cols)
        site.origin, site.street = (x, y), streets[row]
        if site.kind == "home":
            site.name = f"{(i % cols) * 2 + 1} {site.street}"
    width, height = map_size(cols, rows)
    return width, height, streets[:rows]


def _acquaint(rng: random.Random, people: list[_Person], sites: list[_Site], cols: int) -> None:
    """Coworkers next to each other on the rota, next-door neighbours and two rounds of friends."""
    for site in sites:
        staff = site.people if site.kind != "home" else []
        for i, p in enumerate(staff if len(staff) > 1 else []):
            for other in (staff[i - 1], staff[(i + 1) % len(staff)]):
                p.say(f"{p.first} works with {other.name} at {site.name}")
    for i, site in enumerate(sites[:-1]):
        right = sites[i + 1]
        if site.kind == right.kind == "home" and (i + 1) % cols and site.people and right.people:
            a, b = site.people[0], right.people[0]
            a.say(f"{a.first} lives next door to {b.name}")
            b.say(f"{b.first} lives next door to {a.name}")
    for _ in range(2):
        order = people[:]
        rng.shuffle(order)
        for a, b in zip(order[::2], order[1::2], strict=False):
            if a.home is not b.home:
                a.say(f"{a.first} is friends with {b.name}")
                b.say(f"{b.first} is friends with {a.name}")


def _clock(minutes: int) -> str:
    hour, minute = divmod(minutes, 60)
    return f"{(hour - 1) % 12 + 1}:{minute:02d} {'am' if hour < 12 else 'pm'}"


def _routine(rng: random.Random, p: _Person, haunts: list[_Site]) -> tuple[list[str], _Site]:
    """Wake and bed time (bakers early, students late), a hobby and an evening haunt."""
    early = any(w in p.job for w in ("baker", "cook", "grocer", "delivery", "park keeper"))
    wake = rng.randrange(300, 375, 15) if early else rng.randrange(450, 540, 15) if "student" in p.job \
        else rng.randrange(360, 480, 15)
    bed = rng.randrange(1260, 1410, 15) if not early else rng.randrange(1230, 1320, 15)
    haunt = rng.choice(haunts)
    habit = data.EVENING_HABITS[haunt.kind].format(first=p.first, place=haunt.name)
    return [f"{p.first} wakes up at {_clock(wake)} and goes to bed at {_clock(bed)}",
            f"{p.first} enjoys {rng.choice(data.HOBBIES)}", habit], haunt


def _persona(
    rng: random.Random, p: _Person, town: str, haunts: list[_Site], always: list[_Site]
) -> dict[str, Any]:
    assert p.home is not None
    role = "the" if p.head else "an" if p.job[0] in "aeiou" else "a"
    routine, haunt = _routine(rng, p, haunts)
    lines = [f"{p.name} is {role} {p.job}", f"{p.first} lives at {p.home.name} in {town}", *routine, *p.lines]
    places = [p.home.place(0), p.home.place(1), p.work.place(0), p.work.place(1),
              *(s.place(0) for s in [*always, haunt]), f"{town} streets:{p.home.street}"]
    return {"npc_id": p.npc_id, "name": p.name, "age": p.age, "traits": rng.sample(data.TRAITS, 3),
            "occupation": p.job, "location": p.home.place(1), "known_places": list(dict.fromkeys(places)),
            "seed": "; ".join(lines)}


def _plant_stories(rng: random.Random, people: list[_Person], venue: _Site, town: str) -> dict[str, Any]:
    """The party (the venue's owner hosts it) and the candidacy (another owner, or else someone over 30)."""
    host = venue.people[0]
    pronoun = "she" if host.female else "he"
    host.lines[:0] = [f"{host.name} is planning a Valentine's Day party at {venue.name} on February 14 "
                      f"from 5 pm to 7 pm",
                      f"{host.first} wants to invite as many people of {town} as {pronoun} can to the party"]
    owners = [p for p in people if p.head and p is not host and p.age >= 35]
    candidate = rng.choice(owners or [p for p in people if p is not host and p.age >= 30])
    candidate.lines[:0] = [f"{candidate.name} is running for mayor of {town} in the local election",
                           f"{candidate.first} wants {rng.choice(_PLEDGES)}"]
    return {"party": {"keywords": ["party", "valentine"], "host": host.npc_id, "place": venue.name,
                      "start": _PARTY[0], "end": _PARTY[1]},
            "candidacy": {"keywords": ["mayor", "candidacy"], "candidate": candidate.npc_id}}


def generate_town(npcs: int, seed: int) -> dict[str, Any]:
    """A town of ``npcs`` residents as template JSON (``npcworld.templates.Template`` validates it).

    Raises:
        ValueError: ``npcs`` outside MIN_NPCS..MAX_NPCS.
    """
    if not MIN_NPCS <= npcs <= MAX_NPCS:
        raise ValueError(f"a generated town has {MIN_NPCS} to {MAX_NPCS} NPCs, not {npcs}")
    rng = random.Random(f"npcworld-town:{npcs}:{seed}")
    town = rng.choice(data.TOWN_NAMES)
    names = _Names(rng, town)
    workplaces = _workplaces(rng, names, npcs)
    people = _hire(rng, workplaces, npcs)
    homes = []
    for members in _households(rng, names, people):
        homes.append(_Site("", "home", _HOME_ROOMS, people=members))
        for p in members:
            p.home = homes[-1]
    sites = workplaces + homes
    width, height, streets = _lay_out(rng, sites)
    _acquaint(rng, people, sites, grid_for(len(sites))[0])
    venue, always = workplaces[0], workplaces[:5]
    stories = _plant_stories(rng, people, venue, town)
    haunts = [s for s in workplaces if s.kind in data.EVENING_HABITS]
    return {
        "name": town,
        "description": f"A generated town of {npcs} residents (seed {seed}): {len(homes)} homes and "
                       f"{len(workplaces)} workplaces on {len(streets)} streets.",
        "start_time": _START,
        "step_seconds": 10,
        "width": width,
        "height": height,
        "sectors": [*(lot_sector(s.name, s.origin, s.rooms, s.walls) for s in workplaces + homes),
                    streets_sector(f"{town} streets", streets, width, height)],
        "npcs": [_persona(rng, p, town, haunts, always) for p in people],
        "stories": stories,
    }
