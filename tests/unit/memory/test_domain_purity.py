"""The memory domain stays pure: it imports only the stdlib, dataclasses/pydantic and npcworld.contracts."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import services.memory.domain as domain

ALLOWED = {"pydantic", "typing_extensions", "npcworld.contracts", "services.memory.domain"}


def test_memory_domain_imports_nothing_but_the_stdlib_pydantic_and_contracts() -> None:
    offenders = []
    for path in Path(domain.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "__future__":
                    continue
                if not any(name == a or name.startswith(a + ".") for a in ALLOWED):
                    offenders.append(f"{path.name}: {name}")
    assert offenders == []
