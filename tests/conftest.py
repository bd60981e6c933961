"""Root test configuration."""

from __future__ import annotations

import os
from collections import Counter

import pytest

# Test webhook receivers listen on 127.0.0.1, which the egress policy refuses by default. Set before any
# fixture starts a gateway, dispatcher or `npcworld run`, so their subprocesses inherit it.
os.environ["WEBHOOK_ALLOW_HOSTS"] = "127.0.0.1,localhost"

# Under pytest-xdist each worker picks its stacks' ports from a span of its own (launcher/private_ports.py):
# a port picked by one worker could otherwise be bound by another's stack before its own listener starts.
if (worker := os.environ.get("PYTEST_XDIST_WORKER", "")).startswith("gw"):
    _span = (32_000 - 10_000) // max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    _first = 10_000 + int(worker[2:]) * _span
    os.environ["NPCWORLD_PORTS"] = f"{_first}-{_first + _span - 1}"


# Modules that bring up a whole stack (`npcworld run`, or most services at once) and run for tens of seconds.
# Under pytest-xdist (`make test TEST_WORKERS=3`) they are split between two workers, so at most two
# such stacks share the machine's cores at a time, and they start first; every other module stays on one
# worker (its module fixtures start once).
WHOLE_STACK = {
    "stack-a": (
        "tests/chaos/test_chaos.py",
        "tests/e2e/sdk/test_web_game.py",
        "tests/e2e/test_console_operations.py",
        "tests/e2e/test_memory_poisoning_stack.py",
        "tests/integration/test_dependency_outages.py",
        "tests/integration/test_scenario_command.py",
        "tests/integration/test_cli_stack.py",
    ),
    "stack-b": (
        "tests/integration/test_live_rotation.py",
        "tests/e2e/sdk/test_sdks_live.py",
        "tests/e2e/test_console.py",
        "tests/e2e/test_designer_edits.py",
        "tests/integration/replay/test_read_models_are_folds.py",
        "tests/integration/test_eval_command.py",
        "tests/integration/test_run_stop.py",
        "tests/integration/world_state/test_level_of_detail.py",
    ),
}
_GROUP_OF = {module: group for group, modules in WHOLE_STACK.items() for module in modules}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if twice := sorted(nodeid for nodeid, n in Counter(item.nodeid for item in items).items() if n > 1):
        # pytest-xdist schedules by node id: it would run one of the items that share one.
        raise pytest.UsageError(f"tests share a node id (all but one would be skipped by -n): {twice[:5]}")
    if not hasattr(config, "workerinput"):
        return  # not a pytest-xdist worker
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_GROUP_OF.get(_module(item), _module(item))))
    items.sort(key=lambda item: _module(item) not in _GROUP_OF)  # stable: whole stacks first


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]
