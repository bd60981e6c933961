"""docs/engines.md calls the API directly from Unity and Godot: every route it names is in the contract, and
the fields its snippets send and read are the contract's."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _shape(route: str) -> str:
    """A route with each parameter (``{world_id}``, ``{worldId}``, ``%s``) as ``{}``."""
    return re.sub(r"\{[^}]*\}|%s", "{}", route.rstrip("/"))


def _fields(code: str, cls: str) -> set[str]:
    """The field names of a ``[Serializable] class X { public string a; ... }`` in C#."""
    (body,) = re.findall(rf"class {cls} \{{([^}}]*)\}}", code)
    return set(re.findall(r"public \w+ (\w+);", body))


def test_every_route_the_engine_snippets_and_their_notes_name_is_in_the_contract() -> None:
    contract = json.loads((ROOT / "contracts" / "openapi.json").read_text())
    known = {_shape(p) for p in contract["paths"]}
    doc = (ROOT / "docs" / "engines.md").read_text()
    named = {_shape(m) for m in re.findall(r"/v1/[A-Za-z0-9_{}%/.-]+", doc)}
    assert len(named) >= 3
    assert named <= known, named - known


def test_the_snippets_send_the_chat_bodys_fields_and_read_the_replys() -> None:
    schemas = json.loads((ROOT / "contracts" / "openapi.json").read_text())["components"]["schemas"]
    doc = (ROOT / "docs" / "engines.md").read_text()
    csharp = re.search(r"```csharp\n(.*?)```", doc, re.S)
    gdscript = re.search(r"```gdscript\n(.*?)```", doc, re.S)
    assert csharp and gdscript
    sent, read = _fields(csharp[1], "ChatIn"), _fields(csharp[1], "ReplyOut")
    assert sent == set(schemas["ChatIn"]["required"])
    assert read <= set(schemas["ReplyOut"]["properties"])
    assert set(re.findall(r'"(\w+)": (?:player_id|text)', gdscript[1])) == sent
    assert '"reply"' in gdscript[1] and "reply" in schemas["ReplyOut"]["required"]
