"""Games are scored as SmartPlay does: 0 for a random player's expected result, 100 for the optimal one;
the NPC's move is read from its reply."""

from __future__ import annotations

from launcher.evaluation.games import (
    Bandit,
    RockPaperScissors,
    normalise,
    parse_choice,
    parse_hanoi_move,
    payoff,
)
from launcher.evaluation.hanoi import Hanoi, progress, random_progress


def _play(game: Bandit | RockPaperScissors | Hanoi, replies: list[str]) -> float:
    for reply in replies:
        if game.done:
            break
        game.play(reply)
    return game.score()


def test_always_pulling_the_better_lever_scores_100_and_the_worse_minus_100() -> None:
    assert round(_play(Bandit(1), ["I pull the right lever"] * 10), 6) == 100.0
    assert round(_play(Bandit(1), ["left"] * 10), 6) == -100.0
    assert round(_play(Bandit(1), ["left", "right"] * 5), 6) == 0.0


def test_rock_paper_scissors_scores_against_the_opponents_bias() -> None:
    assert round(payoff("paper", (0.5, 0.3, 0.2)), 6) == 0.3  # the best answer to a rock-heavy opponent
    assert round(_play(RockPaperScissors(1), ["Paper, of course."] * 10), 6) == 100.0
    assert round(payoff("scissors", (0.5, 0.3, 0.2)), 6) == -0.2  # beats paper (0.3), loses to rock (0.5)
    assert round(_play(RockPaperScissors(1), ["scissors"] * 10), 6) == -50.0  # never the best throw
    assert round(_play(RockPaperScissors(1), ["rock", "paper", "scissors"] * 3 + ["paper"]), 6) == 10.0


def test_the_optimal_seven_moves_solve_hanoi_for_100() -> None:
    moves = ["A to C", "A to B", "C to B", "A to C", "B to A", "B to C", "A to C"]
    game = Hanoi(1)
    assert _play(game, moves) == 100.0 and game.turns == 7 and game.done


def test_illegal_and_unreadable_hanoi_moves_lose_turns_and_score_below_random() -> None:
    game = Hanoi(1, budget=5)
    assert round(_play(game, ["C to A", "I would rather not", "B to C", "A to A", "C to B"]), 6) == round(
        normalise(0, random_progress(5), 3), 6)
    assert game.illegal == 5 and game.done and game.score() < 0 < random_progress(5)


def test_moves_are_read_from_free_text() -> None:
    assert parse_choice("Hmm. I'll go with the RIGHT one, not the left.", ("left", "right")) == "right"
    assert parse_choice("No idea", ("left", "right")) is None
    assert parse_hanoi_move("I move the small disk from A to C now") == ("A", "C")
    assert parse_hanoi_move("A careful move: B -> C") == ("B", "C")
    assert progress(((), (), (3, 2))) == 2 and progress(((3,), (), (2, 1))) == 0
