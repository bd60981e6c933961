"""NPC regression tests (``npcworld test scenarios/*.yaml``): scripted perceptions, chats and clock steps
against a fresh world, then checks on memories, plans, relationships and replies (docs/studio-controls.md).

Pure parts: ``schema`` (the YAML format and its errors), ``checks`` (evaluating a check against what was
read), ``junit`` (results, the summary and JUnit XML). ``driver`` runs a scenario over the REST API,
``stack`` starts a private embedded backend, ``recording`` saves and loads recorded LLM calls.
"""

from __future__ import annotations

from launcher.scenarios.schema import Scenario, ScenarioError, load_scenario, parse_scenario

__all__ = ["Scenario", "ScenarioError", "load_scenario", "parse_scenario"]
