"""The smallest valid JSON instance of an OpenAPI schema, so generic tests can call every route."""

from __future__ import annotations

import re
from typing import Any

_STRINGS = ("x", "x1", "a", "A", "npc-1", "Ab1", "world:sector:arena", "x:y:z")


def minimal(schema: dict[str, Any], spec: dict[str, Any]) -> Any:
    """A small value satisfying ``schema`` (refs resolved against ``spec``): required fields only."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return minimal(spec["components"]["schemas"][name], spec)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"]
            return minimal(options[0], spec)
    if "allOf" in schema:
        return minimal(schema["allOf"][0], spec)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "default" in schema and schema.get("type") != "object":
        return schema["default"]
    return _typed(schema, spec)


def _typed(schema: dict[str, Any], spec: dict[str, Any]) -> Any:
    kind = schema.get("type", "object")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: minimal(props[k], spec) for k in schema.get("required", ()) if k in props}
    if kind == "array":
        if "prefixItems" in schema:
            return [minimal(s, spec) for s in schema["prefixItems"]]
        return [minimal(schema.get("items", {}), spec) for _ in range(schema.get("minItems", 0))]
    if kind == "integer":
        return int(
            schema.get(
                "minimum", schema.get("exclusiveMinimum", 0) + 1 if "exclusiveMinimum" in schema else 1
            )
        )
    if kind == "number":
        return float(schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1))
    if kind == "boolean":
        return False
    return _string(schema)


def _string(schema: dict[str, Any]) -> str:
    fmt = schema.get("format")
    if fmt == "date-time":
        return "2023-02-13T08:00:00+00:00"
    if fmt in ("uri", "url"):
        return "http://127.0.0.1:9/hook"
    size = schema.get("minLength", 1)
    pattern = schema.get("pattern")
    for base in _STRINGS:
        value = (base * size)[: max(size, len(base))]
        if pattern is None or re.search(pattern, value):
            return value
    raise ValueError(f"no minimal string for {schema}")
