"""The spec reference as Markdown, generated from the models' JSON Schema, so the documentation cannot drift from the
code: one table per section, each field with its type, default and description (pure)."""

from __future__ import annotations

import json
from typing import Any

from fairstream.language.models import Spec


def reference_markdown() -> str:
    """Every section of a spec, the top level first, then each model in the order the schema names them."""
    schema = Spec.model_json_schema()
    models = schema["$defs"]
    parts = [_section("The spec file", schema, models)]
    parts += [_section(name, model, models) for name, model in models.items()]
    return "\n\n".join(parts) + "\n"


def missing_descriptions() -> list[str]:
    """Fields that say nothing about themselves: neither a description of their own nor one of the model they refer to."""
    schema = Spec.model_json_schema()
    models = schema["$defs"]
    found = []
    for owner, model in [("Spec", schema), *models.items()]:
        for field, body in model.get("properties", {}).items():
            if not _description(body, models):
                found.append(f"{owner}.{field}")
    return found


def _section(title: str, model: dict[str, Any], models: dict[str, Any]) -> str:
    required = set(model.get("required", []))
    rows = [
        f"| `{field}` | {_type(body)} | {'required' if field in required else _default(body)} | {_cell(_description(body, models))} |"
        for field, body in model.get("properties", {}).items()
    ]
    intro = model.get("description", "")
    return "\n".join([f"## {title}", "", _cell(intro), "", "| field | type | default | description |", "| --- | --- | --- | --- |", *rows])


def _description(body: dict[str, Any], models: dict[str, Any]) -> str:
    if body.get("description"):
        return body["description"]
    for ref in _refs(body):
        description = models[ref].get("description")
        if description:
            return f"{description} (see {ref})"
    return ""


def _refs(body: dict[str, Any]) -> list[str]:
    found = []
    if "$ref" in body:
        found.append(body["$ref"].rsplit("/", 1)[-1])
    for option in body.get("anyOf", []):
        found += _refs(option)
    for value in body.get("patternProperties", {}).values():
        found += _refs(value)
    if isinstance(body.get("items"), dict):
        found += _refs(body["items"])
    if isinstance(body.get("additionalProperties"), dict):
        found += _refs(body["additionalProperties"])
    return found


def _type(body: dict[str, Any]) -> str:
    if "$ref" in body:
        return body["$ref"].rsplit("/", 1)[-1]
    if "enum" in body:
        return " \\| ".join(f"`{value}`" for value in body["enum"])
    if "const" in body:
        return f"`{body['const']}`"
    if "anyOf" in body:
        return " or ".join(_type(option) for option in body["anyOf"])
    kind = body.get("type", "any")
    if kind == "array":
        return f"list of {_type(body.get('items', {}))}"
    if kind == "object" and "patternProperties" in body:
        return f"map of {_type(next(iter(body['patternProperties'].values())))}"
    if kind == "object" and isinstance(body.get("additionalProperties"), dict):
        return f"map of {_type(body['additionalProperties'])}"
    return str(kind)


def _default(body: dict[str, Any]) -> str:
    if "default" not in body:
        return ""
    value = body["default"]
    return f"`{json.dumps(value)}`" if not isinstance(value, dict) or len(json.dumps(value)) < 60 else "see the section"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")
