"""`npcworld run --instances memory=2,planning=2`: what each process is told."""

from __future__ import annotations

import pytest

from launcher.instances import instance_env, instance_name, parse_instances
from launcher.supervisor import SERVICE_MODULES, process_commands

SERVICES = ("memory", "planning", "dialogue")


def test_counts_are_read_per_service() -> None:
    assert parse_instances("memory=2, planning=3", SERVICES) == {"memory": 2, "planning": 3}
    assert parse_instances("", SERVICES) == {}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("memory", "not SERVICE=COUNT"),
        ("memroy=2", "unknown service 'memroy'"),
        ("memory=0", "1 to 16"),
        ("memory=99", "1 to 16"),
        ("memory=2,memory=3", "given twice"),
    ],
)
def test_a_bad_count_is_refused_saying_why(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_instances(text, SERVICES)


def test_each_extra_instance_is_a_process_of_its_own() -> None:
    one = process_commands(None)
    two = process_commands(None, {"memory": 2, "planning": 2})
    assert set(two) - set(one) == {"memory-2", "planning-2"}
    assert two["memory-2"] == one["memory"] and two["planning-2"] == one["planning"]
    assert set(one) >= {instance_name(s, 1) for s in SERVICE_MODULES}
    assert one["gateway-projection"][-1] == "services.gateway.consumer"  # "gateway" is the API's name


def test_instances_are_dynamic_group_members_and_every_memory_api_is_known_to_all() -> None:
    shared, own = instance_env({"memory": 3, "planning": 2}, {"KAFKA_GROUP_INSTANCE_ID": "run"})
    for name in ("memory", "memory-2", "memory-3", "planning", "planning-2"):
        assert own[name]["KAFKA_GROUP_INSTANCE_ID"] == "", name  # no static id: the broker rebalances them
    assert "MEMORY_API_PORT" not in own["memory"]  # the first keeps the run's port
    ports = ["8101", own["memory-2"]["MEMORY_API_PORT"], own["memory-3"]["MEMORY_API_PORT"]]
    assert len(set(ports)) == 3, "each memory instance serves its API on a port of its own"
    assert shared["MEMORY_API_URL"].split(",") == [f"http://127.0.0.1:{p}" for p in ports]


def test_one_instance_of_everything_is_exactly_the_usual_run() -> None:
    assert instance_env({}, {"KAFKA_GROUP_INSTANCE_ID": "run"}) == ({}, {})
    assert instance_env({"memory": 1}, {"KAFKA_GROUP_INSTANCE_ID": "run"}) == ({}, {})
