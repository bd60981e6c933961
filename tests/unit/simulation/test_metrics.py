"""The report's metrics on a planted history: diffusion through a conversation chain, density, attendance."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from launcher.simulation import (
    Conversation,
    LlmCall,
    Sighting,
    WorldFacts,
    attendance,
    build_report,
    comparable,
    density,
    diffusion,
    llm_usage,
    to_markdown,
)
from launcher.simulation.storage import storage_figures

T0 = datetime(2023, 2, 13, 7, 0, tzinfo=UTC)
NAMES = {"ana": "Ana Lind", "ben": "Ben Cole", "cy": "Cy Ward", "dee": "Dee Park", "eve": "Eve Moss"}
SEEDS = {
    "ana": "Ana is hosting a Valentine's party at the cafe; Ana knows Ben Cole",
    "ben": "Ben works at the mill; Ben is friends with Ana",
    "cy": "Cy paints",
    "dee": "Dee is running for mayor",
    "eve": "Eve fishes",
}


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


# ana tells ben (1 h), ben tells cy (2 h); dee and eve chat about fishing (no party); cy talks to eve
# about the weather only, so eve never learns of the party.
CHAIN = [
    Conversation(at(2), ("ben", "cy"), "Ben: Ana is throwing a party at the cafe! Cy: I'll come."),
    Conversation(at(1), ("ana", "ben"), "Ana: come to my Valentine's party tomorrow at five."),
    Conversation(at(3), ("dee", "eve"), "Dee: caught anything? Eve: two trout."),
    Conversation(at(4), ("cy", "eve"), "Cy: nice weather. Eve: it is."),
]


def test_a_planted_conversation_chain_spreads_the_party_to_exactly_the_chain() -> None:
    d = diffusion(SEEDS, CHAIN, ["party", "valentine"])
    assert d.start == {"ana"}
    assert d.end == {"ana", "ben", "cy"}
    assert d.chains["cy"] == ("ana", "ben", "cy")  # time order, not list order: ben learned first


def test_a_conversation_that_mentions_the_fact_without_a_knower_spreads_nothing() -> None:
    d = diffusion(SEEDS, [Conversation(at(1), ("cy", "eve"), "Is there a party somewhere?")], ["party"])
    assert d.end == {"ana"}  # only the host, from her seed


def test_density_counts_only_mutual_acquaintance() -> None:
    npcs = list(NAMES)
    # ana↔ben mutual, cy→dee one-sided: one edge of 10 possible
    assert density(npcs, {("ana", "ben"), ("ben", "ana"), ("cy", "dee")}) == 2 * 1 / (5 * 4)
    assert density(["solo"], set()) == 0.0


def test_report_from_the_planted_history() -> None:
    facts = WorldFacts(
        world_id="w",
        names=NAMES,
        seeds=SEEDS,
        conversations=CHAIN,
        steps=360,
        world_start=T0,
        world_end=at(48),
        sightings=[Sighting(T0, n, "w:Home:room") for n in NAMES]
        + [
            Sighting(at(34.5), "ben", "w:Cafe:floor"),
            Sighting(at(37), "cy", "w:Cafe:floor"),
            Sighting(at(35.5), "ben", "w:Street:road"),
        ],
        llm_calls=[
            LlmCall("ana", "plan", 100, 20),
            LlmCall("ben", "plan", 80, 20),
            LlmCall(None, "importance", 10, 1),
        ],
    )
    stories: dict[str, dict[str, Any]] = {
        "party": {
            "keywords": ["party", "valentine"],
            "host": "ana",
            "place": "Cafe",
            "start": at(34).isoformat(),
            "end": at(36).isoformat(),
        },
        "candidacy": {"keywords": ["mayor"]},
    }
    report = build_report(facts, stories, {"template": "t", "seed": 1, "days": 2, "step_seconds": 10}, 12.0)
    assert report["information_diffusion"]["party"]["start"] == 1
    assert report["information_diffusion"]["party"]["end"] == 3
    assert report["information_diffusion"]["candidacy"]["end"] == 1  # dee never spoke of it
    # start: ana↔ben from the seeds (1 edge); end adds the four conversation pairs (ana-ben already there)
    assert report["network_density"]["start"] == 0.1
    assert report["network_density"]["end"] == 0.4
    assert report["party"]["attended"] == ["ben"]  # cy came after the party ended
    assert report["party"]["invited_and_came"] == 1 and report["party"]["invited"] == 2
    assert report["llm"]["plan"]["calls_per_npc_day"] == 0.2
    assert report["wall"]["npc_steps_per_second"] == 150.0
    assert comparable(report) == comparable(build_report(facts, stories, report["run"] | {}, 99.0))
    assert "| party | 1 (20.0%) | 3 (60.0%) |" in to_markdown(report)


def test_nobody_attends_a_party_the_run_did_not_reach() -> None:
    facts = WorldFacts(
        world_id="w",
        names=NAMES,
        seeds=SEEDS,
        world_start=T0,
        world_end=at(2),
        sightings=[Sighting(at(1), "ana", "w:Cafe:floor")],
    )
    stories = {
        "party": {
            "keywords": ["party"],
            "host": "ana",
            "place": "Cafe",
            "start": at(34).isoformat(),
            "end": at(36).isoformat(),
        }
    }
    report = build_report(facts, stories, {"days": 0.1}, 1.0)
    assert report["party"]["attended"] == [] and not report["party"]["window_simulated"]


def test_attendance_counts_whoever_was_already_there_when_it_started() -> None:
    seen = [
        Sighting(at(0), "ana", "w:Cafe:kitchen"),
        Sighting(at(1), "ben", "w:Cafe:floor"),
        Sighting(at(1.5), "ben", "w:Street"),
    ]
    assert attendance(seen, at(2), at(3), "w:Cafe") == {"ana"}


def test_llm_usage_is_per_npc_per_day() -> None:
    usage = llm_usage([LlmCall("a", "k", 5, 5, prompt_chars=400)] * 10, npc_count=5, days=2)
    assert usage["k"] == {"calls": 10, "tokens": 100, "calls_per_npc_day": 1.0, "tokens_per_npc_day": 10.0,
                          "prompt_tokens_per_npc_day": 5.0, "prompt_tokens_estimated": False}
    assert usage["all"]["calls"] == 10


def test_prompt_tokens_are_estimated_from_the_prompt_text_where_the_provider_counted_none() -> None:
    offline = [LlmCall("a", "importance", 0, 0, prompt_chars=401)] * 4  # 101 tokens each at 4 chars a token
    live = [LlmCall("a", "plan_day", 300, 50, prompt_chars=2000)] * 2  # the provider's count wins
    usage = llm_usage([*offline, *live], npc_count=2, days=1)
    assert usage["importance"]["prompt_tokens_per_npc_day"] == 202.0
    assert usage["importance"]["prompt_tokens_estimated"] is True
    assert usage["importance"]["tokens_per_npc_day"] == 0.0  # nothing counted is reported as counted
    assert usage["plan_day"]["prompt_tokens_per_npc_day"] == 300.0
    assert usage["plan_day"]["prompt_tokens_estimated"] is False
    assert usage["all"]["prompt_tokens_estimated"] is True
    report = build_report(WorldFacts(world_id="w", names=NAMES, seeds=SEEDS, llm_calls=[*offline, *live]),
                          {}, {"days": 1}, 1.0)
    assert "(estimate)" in to_markdown(report).split("| importance |")[1].splitlines()[0]


def test_storage_is_what_the_tables_grew_by_per_npc_day_and_stays_out_of_the_seed_comparison() -> None:
    before = {"events": 1_000_000, "memories": 500_000, "llm_calls": 0}
    after = {"events": 5_000_000, "memories": 2_500_000, "llm_calls": 1_000_000, "new_table": 8192}
    figures = storage_figures(before, after, npc_days=2)
    assert figures["mb"] == 7.01
    assert figures["mb_per_npc_day"] == 3.5
    assert list(figures["largest_tables_mb_per_npc_day"].items())[:3] == [
        ("events", 2.0), ("memories", 1.0), ("llm_calls", 0.5)]
    report = build_report(WorldFacts(world_id="w", names=NAMES, seeds=SEEDS), {}, {"days": 1}, 1.0)
    other = report | {"storage": figures}
    assert comparable(other) == comparable(report)
    assert "3.5 MB per NPC-day" in to_markdown(other)
