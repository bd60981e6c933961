"""Interview answers are graded against the NPC's ground truth: a stated fact is correct, a claim the NPC
never perceived is a hallucination, and questions come from what the event log says about the NPC."""

from __future__ import annotations

from datetime import UTC, datetime

from launcher.evaluation.grading import Knowledge, Question, claims, grade, recall
from launcher.evaluation.questions import NpcTruth, Perceived, PlanStep, knowledge_of, questions_for

T = datetime(2023, 2, 13, 9, tzinfo=UTC)
ADA = NpcTruth(
    "ada", "Ada Park", occupation="baker at the Mill Street bakery", traits=("patient", "curious"),
    seeds=("Ada Park bakes bread every morning", "Ada is friends with Tom Reed"),
    perceived=(Perceived(T, "Tom Reed is sweeping the bakery floor", "tom"),
               Perceived(T, "the oven is burning", "oven")),
    plan=(PlanStep(T, "bake rye bread", "bakery:kitchen"),
          PlanStep(T.replace(hour=14), "deliver bread to the inn", "inn:bar")),
    known_names={"tom": "Tom Reed"},
)


def test_an_answer_stating_half_the_words_of_an_expected_fact_is_correct() -> None:
    q = Question("ada", "plans", "What will you be doing at 09:00?", ("bake rye bread in the kitchen",))
    right = grade(q, "Since you ask: I will bake rye bread.", knowledge_of(ADA), "Ada Park")
    wrong = grade(q, "I will go fishing by the river.", knowledge_of(ADA), "Ada Park")
    assert (right.correct, right.score) == (True, 1.0)
    assert not wrong.correct and wrong.score == 0.0


def test_a_long_fact_needs_only_three_of_its_words() -> None:
    fact = "Marta is planning a Valentine's Day party at the Lantern Cafe on February 14 from 5 pm to 7 pm"
    assert recall(fact, "a party at the Lantern Cafe") == 1.0
    assert recall(fact, "the Lantern is nice") == 1 / 3


def test_a_claim_about_something_never_perceived_is_a_hallucination() -> None:
    q = Question("ada", "memory", "Who is Tom Reed?", ("Tom Reed is sweeping the bakery floor",))
    grounded = grade(q, "Since you ask: Tom Reed is sweeping the bakery floor.", knowledge_of(ADA),
                     "Ada Park")
    invented = grade(q, "Tom Reed is sweeping the floor. He robbed the village bank last winter.",
                     knowledge_of(ADA), "Ada Park")
    assert grounded.correct and not grounded.hallucinated
    assert invented.correct and invented.hallucinated
    assert invented.unsupported == ("He robbed the village bank last winter.",)


def test_not_knowing_asserts_nothing() -> None:
    q = Question("ada", "memory", "Who is Lena Fox?", ("Lena Fox runs the inn",))
    graded = grade(q, "I don't know anything about that.", Knowledge(()), "Ada Park")
    assert (graded.correct, graded.hallucinated) == (False, False)
    assert claims("Hello there. I am baking bread for the inn.") == ["I am baking bread for the inn."]
    cut = "I bake bread; then I spend the quiet even..."
    assert claims(cut) == ["I bake bread;", "then I spend the quiet"]


def test_questions_cover_the_categories_the_truth_gives_facts_for() -> None:
    asked = questions_for(ADA)
    by_category = {q.category: [x.text for x in asked if x.category == q.category] for q in asked}
    assert by_category["self_knowledge"] == ["Give an introduction of yourself.", "What is your occupation?"]
    assert by_category["memory"] == ["Who is Tom Reed?"]
    assert by_category["plans"] == ["What will you be doing at 09:00 on Monday?",
                                    "What will you be doing at 14:00 on Monday?"]
    assert by_category["reactions"] == [
        "You notice this: Tom Reed is sweeping the bakery floor. What do you do?",
        "You notice this: the oven is burning. What do you do?",
    ]
    assert "reflections" not in by_category  # no reflection in the log yet
    who = next(q for q in asked if q.category == "memory")
    assert who.expected == ("Tom Reed is sweeping the bakery floor", "Ada is friends with Tom Reed")


def test_reflections_are_asked_about_once_the_npc_has_reflected() -> None:
    truth = NpcTruth("ada", "Ada Park", reflections=("Ada cares deeply about her bread",))
    asked = [q for q in questions_for(truth) if q.category == "reflections"]
    assert len(asked) == 2 and all(q.expected == truth.reflections for q in asked)


def test_a_reflection_is_stated_by_its_conclusion_not_by_repeating_the_memory_it_quotes() -> None:
    truth = NpcTruth("ada", "Ada Park", reflections=(
        'the bakery comes up in 5 of Ada Park\'s memories, most notably: "Tom Reed is sweeping the bakery'
        ' floor"',))
    asked = next(q for q in questions_for(truth) if q.category == "reflections")
    knows = knowledge_of(truth)
    said = grade(asked, "Since you ask: The bakery comes up in 5 of my memories.", knows, "Ada Park")
    observed = grade(asked, "Since you ask: Tom Reed is sweeping the bakery floor.", knows, "Ada Park")
    assert said.correct and not observed.correct


def test_an_npc_naming_itself_states_no_fact() -> None:
    q = Question("ada", "plans", "What will you be doing at 09:00?", ("Ada Park bakes rye",))
    assert not grade(q, "Since you ask: I am Ada Park.", knowledge_of(ADA), "Ada Park").correct
    assert grade(q, "I will bake rye.", knowledge_of(ADA), "Ada Park").correct


def test_an_npc_telling_its_age_invents_nothing() -> None:
    truth = NpcTruth("ada", "Ada Park", occupation="baker", age=41)
    q = Question("ada", "self_knowledge", "Give an introduction of yourself.", ("baker",))
    graded = grade(q, "Since you ask: I am Ada Park, age 41; baker.", knowledge_of(truth), "Ada Park")
    assert graded.correct and not graded.hallucinated
