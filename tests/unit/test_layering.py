"""The layers import downwards only: launcher → services → npcworld (the shared core).

Every module of ``libs/npcworld``, ``services/`` and ``launcher/`` is parsed with ``ast``, and every import in
it is read wherever it is written (top level, inside a function, under ``if TYPE_CHECKING``), as are
``importlib.import_module(...)`` / ``__import__(...)`` calls whose module name starts with a literal. The
shared core imports neither ``services`` nor ``launcher``; a service never imports ``launcher``. The
launcher may import both (it starts the services and seeds worlds through their repositories).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Directory → (its top-level package, the top-level packages its modules must not import).
LAYERS: dict[str, tuple[str, frozenset[str]]] = {
    "libs/npcworld": ("npcworld", frozenset({"services", "launcher"})),
    "services": ("services", frozenset({"launcher"})),
    "launcher": ("launcher", frozenset()),
}


@dataclass(frozen=True)
class Import:
    module: str  # absolute dotted name, as far as it can be known
    line: int
    dynamic: bool = False

    def top(self) -> str:
        return self.module.split(".")[0]


def _package_of(path: Path, root: str, package: str) -> list[str]:
    """The dotted package a file is in (``services/gateway/api.py`` → ``["services", "gateway"]``)."""
    rel = path.relative_to(ROOT / root).parts
    return [package, *rel[:-1]]  # a module's package is its directory, ``__init__.py``'s included


def _literal_prefix(node: ast.expr) -> str | None:
    """The string a module-name argument starts with: a constant, or an f-string's leading literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def imports_of(source: str, package: list[str], filename: str = "<source>") -> list[Import]:
    """Every import in ``source`` (a module of ``package``), relative ones made absolute."""
    found: list[Import] = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            found.extend(Import(alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                anchor = package[: len(package) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            if node.module:
                found.append(Import(base, node.lineno))
            else:  # ``from . import x`` / ``from services import x``: each name may be a module
                found.extend(Import(f"{base}.{alias.name}", node.lineno) for alias in node.names)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            prefix = _literal_prefix(node.args[0]) if name in {"import_module", "__import__"} else None
            if prefix and not prefix.startswith("."):
                found.append(Import(prefix, node.lineno, dynamic=True))
    return found


def _files(root: str) -> list[Path]:
    return sorted(p for p in (ROOT / root).rglob("*.py") if "__pycache__" not in p.parts)


def violations(root: str) -> list[str]:
    package, forbidden = LAYERS[root]
    bad: list[str] = []
    for path in _files(root):
        for imp in imports_of(path.read_text(), _package_of(path, root, package), str(path)):
            if imp.top() in forbidden:
                how = "imports (dynamically)" if imp.dynamic else "imports"
                bad.append(f"{path.relative_to(ROOT)}:{imp.line} {how} {imp.module}")
    return bad


@pytest.mark.parametrize("root", list(LAYERS))
def test_the_layer_has_modules_and_they_parse(root: str) -> None:
    files = _files(root)
    assert files, f"no modules under {root}/"
    for path in files:
        ast.parse(path.read_text(), str(path))


def test_the_shared_core_imports_neither_services_nor_the_launcher() -> None:
    bad = violations("libs/npcworld")
    assert not bad, ("libs/npcworld is the shared core: it must not import services.* or launcher.* "
                     "(move the code up, or pass what it needs in):\n  " + "\n  ".join(bad))


def test_services_never_import_the_launcher() -> None:
    bad = violations("services")
    assert not bad, ("services must not import launcher.* (the launcher starts the services, "
                     "not the other way round):\n  " + "\n  ".join(bad))


def test_the_launcher_sits_above_the_services() -> None:
    """The launcher really does use the services (so it belongs above them, not in the core)."""
    tops = {imp.top() for path in _files("launcher")
            for imp in imports_of(path.read_text(), _package_of(path, "launcher", "launcher"))}
    assert {"services", "npcworld"} <= tops


def test_the_checker_sees_imports_wherever_they_are_written() -> None:
    source = """
import services.gateway.api
from launcher.cli import main
from services import world_state
from . import sibling
from ..core import thing
import importlib
if TYPE_CHECKING:
    from launcher.supervisor import Supervisor

def later() -> None:
    from services.memory.repository import MemoryRepository
    importlib.import_module(f"services.{name}.handlers")
    __import__("launcher.demo")
"""
    found = {(imp.module, imp.dynamic) for imp in imports_of(source, ["npcworld", "outbox"])}
    assert found >= {
        ("services.gateway.api", False), ("launcher.cli", False), ("services", False),
        ("npcworld.outbox.sibling", False), ("npcworld.core", False), ("launcher.supervisor", False),
        ("services.memory.repository", False), ("services.", True), ("launcher.demo", True),
    }
    for file, package in [("services/gateway/api.py", ["services", "gateway"]),
                          ("services/gateway/__init__.py", ["services", "gateway"])]:
        assert _package_of(ROOT / file, "services", "services") == package
    assert _package_of(ROOT / "libs/npcworld/db.py", "libs/npcworld", "npcworld") == ["npcworld"]
