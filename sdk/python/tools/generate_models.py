"""Writes src/npcworld_sdk/_models.py from contracts/openapi.json: one pydantic model per component schema.

Run from the repository root: ``.venv/bin/python sdk/python/tools/generate_models.py``. The models carry the
contract's field names and types but not its limits (lengths, ranges, patterns): the server validates, and its
refusal arrives as a typed problem (``npcworld_sdk.UnprocessableEntityError``).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = ROOT / "contracts" / "openapi.json"
TARGET = ROOT / "sdk" / "python" / "src" / "npcworld_sdk" / "_models.py"

HEADER = '''"""Resource models generated from contracts/openapi.json by sdk/python/tools/generate_models.py:
do not edit."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

'''


def class_name(schema_name: str) -> str:
    """``Page_WorldOut_`` becomes ``PageWorldOut``."""
    return re.sub(r"[^A-Za-z0-9]", "", schema_name)


def annotation(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return class_name(schema["$ref"].rsplit("/", 1)[1])
    if "anyOf" in schema:
        parts = [annotation(s) for s in schema["anyOf"]]
        return " | ".join(dict.fromkeys(parts))
    if "const" in schema:
        return f"Literal[{json.dumps(schema['const'])}]"
    if "enum" in schema:
        return f"Literal[{', '.join(json.dumps(v) for v in schema['enum'])}]"
    kind = schema.get("type")
    if kind == "string":
        return "datetime" if schema.get("format") == "date-time" else "str"
    if kind == "array":
        if "prefixItems" in schema:
            return f"tuple[{', '.join(annotation(s) for s in schema['prefixItems'])}]"
        return f"list[{annotation(schema.get('items', {}))}]"
    if kind == "object":
        return "dict[str, Any]"
    return {"integer": "int", "number": "float", "boolean": "bool", "null": "None"}.get(kind or "", "Any")


def default_of(name: str, prop: dict[str, Any], required: bool) -> str:
    if required:
        return ""
    if "default" in prop:
        value = prop["default"]
        if isinstance(value, list | dict):
            return f" = Field(default_factory={type(value).__name__})"
        return f" = {json.dumps(value) if isinstance(value, str) else repr(value)}"
    kind = prop.get("type")
    if kind == "array":
        return " = Field(default_factory=list)"
    if kind == "object":
        return " = Field(default_factory=dict)"
    return " = None"


def model(name: str, schema: dict[str, Any]) -> str:
    doc = (schema.get("description") or schema.get("title") or name).split("\n")[0].strip()
    extra = "forbid" if schema.get("additionalProperties") is False else "allow"
    lines = [f"class {class_name(name)}(BaseModel):", f'    """{doc.replace("`", "")}"""', ""]
    lines.append(f'    model_config = ConfigDict(extra="{extra}")')
    lines.append("")
    required = set(schema.get("required", []))
    for prop_name, prop in schema.get("properties", {}).items():
        kind = annotation(prop)
        optional = prop_name not in required and "default" not in prop and "None" not in kind
        if optional and prop.get("type") not in ("array", "object"):
            kind += " | None"
        lines.append(f"    {prop_name}: {kind}{default_of(prop_name, prop, prop_name in required)}")
    return "\n".join(lines)


def render(contract: dict[str, Any]) -> str:
    schemas = contract["components"]["schemas"]
    names = sorted(schemas)
    body = "\n\n\n".join(model(n, schemas[n]) for n in names)
    exports = ",\n".join(f'    "{class_name(n)}"' for n in names)
    return f"{HEADER}__all__ = [\n{exports},\n]\n\n\n{body}\n"


def main() -> int:
    text = render(json.loads(CONTRACT.read_text()))
    if "--check" in sys.argv[1:]:
        if TARGET.read_text() != text:
            print(f"{TARGET} is out of date: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
