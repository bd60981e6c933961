"""The importance lexicon: word patterns and the poignancy (1-10) they signal, from chores to life events.

A pattern is a run of words; a word ending in ``*`` matches any word starting with it. Anchors follow the
Generative Agents paper: brushing teeth 1, cleaning a room about 2, asking a crush out about 8, a break-up 10.
"""

from __future__ import annotations

__all__ = ["IMPORTANCE_LEXICON", "UNMATCHED_SCORE", "UNMATCHED_WITH_PERSON_SCORE"]

UNMATCHED_SCORE = 2
UNMATCHED_WITH_PERSON_SCORE = 3

# fmt: off
_LEVELS: dict[int, tuple[str, ...]] = {
    10: (
        "broke up", "break up", "breaks up", "breaking up", "breakup", "divorce*", "died", "dies", "death",
        "funeral", "murder*", "killed", "pregnan*", "cancer", "college acceptance", "accepted into",
    ),
    9: (
        "married", "marriage", "marry", "wedding", "engaged", "fired", "laid off", "heartbroken", "betray*",
        "arrested", "accident", "emergency", "proposed to",
    ),
    8: (
        "crush", "in love", "kiss*", "first date", "dating", "ask* her out", "ask* him out", "ask* them out",
        "election*", "elected", "mayor", "candida*", "campaign*", "promot*", "on fire", "burning", "fight*",
        "fought", "stole", "stolen", "theft", "hospital*", "injur*",
    ),
    7: (
        "argu*", "quarrel*", "jealous*", "angry", "furious", "upset", "cried", "crying", "tears", "secret*",
        "confess*", "apolog*", "valentine*", "birthday", "graduat*", "exam*", "job interview", "vote*",
        "voting", "constitution", "scandal*", "rumor*", "rumour*",
    ),
    6: (
        "party", "parties", "invit*", "celebrat*", "festival*", "concert*", "gift*", "news", "announc*",
        "decided", "decides", "worried", "worry", "excited", "nervous", "proud", "lonely", "afraid",
        "friend*", "relationship*", "love*", "tax*", "amendment*",
    ),
    5: (
        "talk*", "chat*", "conversation*", "discuss*", "met", "meet*", "visit*", "neighbo*", "help*",
        "advice", "gossip*", "plan*", "research*",
    ),
    4: (
        "work*", "study*", "studied", "read*", "writ*", "wrote", "paint*", "practic*", "lesson*", "class",
        "shop*", "buy*", "bought", "customer*", "music", "garden*", "sing*", "play*",
    ),
    3: ("cook*", "lunch", "dinner", "coffee", "order*", "serv*", "stroll*", "phone", "email*"),
    2: (
        "clean*", "tidy*", "laundry", "dishes", "sweep*", "mop*", "wash*", "shower*", "bath*", "dress*",
        "breakfast", "eat*", "ate", "drink*", "commut*", "walk*", "sitting", "sits", "wait*", "empty",
    ),
    1: (
        "brush*", "teeth", "sleep*", "slept", "asleep", "nap", "napping", "idle", "bed", "wake*", "woke",
        "yawn*",
    ),
}
# fmt: on

IMPORTANCE_LEXICON: tuple[tuple[tuple[str, ...], int], ...] = tuple(
    (tuple(pattern.split()), level) for level, patterns in _LEVELS.items() for pattern in patterns
)
