"""Crafter as the NPC plays it: the view told in words, the action read from the reply, and SmartPlay's
score (achievements unlocked so far, summed over the turns) between a random player (0) and the scripted
reference player (100) on the same map."""

from __future__ import annotations

import pytest

from launcher.evaluation.crafter_expert import expert_action
from launcher.evaluation.crafter_game import ACTION_WORDS, Crafter, describe, parse_crafter_action


@pytest.fixture(scope="module")
def played_like_the_reference() -> Crafter:
    game = Crafter(1, turns=30)
    while not game.done:
        game.question()
        game.play(f"I think I'll {ACTION_WORDS[expert_action(game.env)]} now.")
    return game


def test_replies_naming_the_reference_players_actions_score_100(played_like_the_reference: Crafter) -> None:
    game = played_like_the_reference
    assert game.score() == 100.0
    assert game.raw == game.reference_raw() > game.random_raw() > 0


def test_the_reference_player_works_down_the_tech_tree(played_like_the_reference: Crafter) -> None:
    unlocked = {a for a, n in played_like_the_reference.env._player.achievements.items() if n}
    assert {"collect_wood", "place_table", "make_wood_pickaxe", "make_wood_sword"} <= unlocked


def test_a_reply_naming_no_action_plays_a_random_one_and_scores_near_zero() -> None:
    game = Crafter(1, turns=20)
    outcomes = []
    while not game.done:
        outcomes.append(game.play("The left lever paid nothing."))
    assert all(o.startswith("I chose to ") for o in outcomes) and game.moves == [None] * 20
    assert game.score() < 50  # a random player's expected score is 0; one episode lands near it


def test_a_reply_that_only_repeats_the_question_or_the_rules_names_no_action() -> None:
    game = Crafter(1, turns=3)
    asked = game.question()
    echo = f'Good to see you again! A traveller told me: "{asked}" I have not seen it myself.'
    assert parse_crafter_action(echo) == ACTION_WORDS.index("do")  # "What do you do now?" read naively
    assert game.play(echo) and game.moves == [None]
    game.question()
    game.play(f"{game.rules()} So I will chop the tree.")
    assert game.moves == [None, ACTION_WORDS.index("do")]


def test_the_same_replies_on_the_same_map_give_the_same_score() -> None:
    scores = []
    for _ in range(2):
        game = Crafter(1, turns=12)
        while not game.done:
            game.play("move north" if len(game.moves) % 2 else "do")
        scores.append((game.raw, game.score()))
    assert scores[0] == scores[1]


def test_the_random_players_baseline_is_the_same_every_time_it_is_played_out() -> None:
    game = Crafter(2, turns=60)  # long enough for creatures to spawn and despawn
    assert game.random_raw() == game.random_raw() == Crafter(2, turns=60).random_raw()


@pytest.mark.parametrize(("reply", "action"), [
    ("I'll go north towards the tree.", "move north"),
    ("Chop the tree in front of me", "do"),
    ("Craft a wooden pickaxe, then move east", "make wood pickaxe"),
    ("Let me place the table here", "place table"),
    ("Plant: put a sapling down", "place plant"),
    ("It is late; I sleep.", "sleep"),
    ("I wait and see.", "wait"),
])
def test_the_action_is_the_first_one_the_reply_names(reply: str, action: str) -> None:
    assert parse_crafter_action(reply) == ACTION_WORDS.index(action)


def test_no_action_named_reads_as_none() -> None:
    assert parse_crafter_action("What a lovely morning.") is None


def test_the_question_tells_what_is_in_view_faced_held_and_felt() -> None:
    game = Crafter(1, turns=5)
    text = describe(game.env)
    assert text.startswith("I see: ") and "I face " in text and "I hold nothing" in text
    assert "health 9, food 9, drink 9, energy 9" in text
    assert game.question().endswith("What do you do now? Name one action.")
    assert "30" not in game.rules() and "There are 5 turns." in game.rules()
