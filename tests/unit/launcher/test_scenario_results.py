"""Scenario results as CI reads them (JUnit XML) and as a person reads them (the summary); the LLM mode."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from launcher.scenarios.junit import CaseResult, ScenarioResult, summary, to_junit_xml
from launcher.scenarios.modes import llm_env, resolve_mode

RESULTS = [
    ScenarioResult("fire", "s/fire.yaml", (
        CaseResult("memories of marta: contains 'fire'", 20, 0.01),
        CaseResult("reply morning: contains 'fire'", 24, 0.0,
                   failure="nothing contains 'fire'. reply: 'Hello'"),
    ), 3.5),
    ScenarioResult("party", "s/party.yaml", (
        CaseResult("steps[1] (chat)", 12, 1.0, error="POST /v1/worlds/party/npcs/sam/chat answered 404: ..."),
    ), 1.25),
]


def test_junit_xml_has_a_suite_per_scenario_and_a_case_per_check() -> None:
    root = ET.fromstring(to_junit_xml(RESULTS))
    assert root.tag == "testsuites"
    counts = (root.get("tests"), root.get("failures"), root.get("errors"), root.get("time"))
    assert counts == ("3", "1", "1", "4.750")
    fire, party = root.findall("testsuite")
    assert (fire.get("name"), fire.get("file"), fire.get("tests"), fire.get("failures")) == (
        "fire", "s/fire.yaml", "2", "1")
    passed, failed = fire.findall("testcase")
    assert passed.find("failure") is None and passed.get("line") == "20"
    failure = failed.find("failure")
    assert failure is not None and failure.text == "nothing contains 'fire'. reply: 'Hello'"
    error = party.find("testcase/error")
    assert error is not None and error.get("message", "").startswith("POST /v1/worlds/party/npcs/sam/chat")


def test_the_summary_names_each_failure_where_it_is_written() -> None:
    text = summary(RESULTS)
    assert text.splitlines()[0] == "FAIL  fire  (2 checks, 3.5 s)"
    assert "  s/fire.yaml:24: failed: reply morning: contains 'fire'\n    nothing contains 'fire'" in text
    assert "  s/party.yaml:12: error: steps[1] (chat)" in text
    assert text.splitlines()[-1] == "2 scenarios (2 failed), 3 checks: 1 failed, 1 errors"
    assert ScenarioResult("empty", "e.yaml", (), 0.0).ok is False  # a scenario that checked nothing fails


def test_auto_replays_only_when_every_scenario_was_recorded() -> None:
    assert resolve_mode("auto", {"a": True, "b": True}) == "replay"
    assert resolve_mode("auto", {"a": False, "b": False}) == "offline"
    assert resolve_mode("record", {"a": False}) == "record"
    with pytest.raises(ValueError, match="only some scenarios have a recording"):
        resolve_mode("auto", {"a": True, "b": False})
    with pytest.raises(ValueError, match="no recording to replay for: b"):
        resolve_mode("replay", {"a": True, "b": False})


def test_a_replay_asks_with_the_recorded_model_and_response_format() -> None:
    offline = {"model": "npcworld-offline-1", "provider": "offline",
               "parameters": {"response_format": "json_object"}}
    live = {"model": "qwen2.5-7b", "provider": "openai", "parameters": {"response_format": "json_schema"}}
    assert llm_env("offline") == {"LLM_PROVIDER": "offline", "LLM_MODE": "live"}
    assert llm_env("replay", [offline]) == {"LLM_MODE": "replay", "LLM_PROVIDER": "offline"}
    # an offline fallback inside a live recording does not decide the model
    assert llm_env("replay", [live, offline]) == {
        "LLM_MODE": "replay", "LLM_PROVIDER": "openai", "LLM_MODEL": "qwen2.5-7b",
        "LLM_RESPONSE_FORMAT": "json_schema"}
    with pytest.raises(ValueError, match="different models"):
        llm_env("replay", [live, {**live, "model": "gpt-4o-mini"}])
