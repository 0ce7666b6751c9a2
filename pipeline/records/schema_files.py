"""The published JSON Schemas of the output records, generated from their Structs (`records.wire`) and kept in
`schemas/` beside this module, where CloudEvents' `dataschema` names them. `python -m fairstream.records.schema_files`
writes them again after a Struct changed; a test fails while the files and the Structs differ (pure, apart from `write`)."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import msgspec

from fairstream.records import notices, wire
from fairstream.records.cloudevents import schema_uri

SCHEMA_DIR = Path(__file__).parent / "schemas"

RECORDS: dict[str, tuple[str, tuple[type[wire.Record], ...]]] = {
    "estimate": ("fairness.estimate", (wire.Estimate,)),
    "alert": ("fairness alert", (wire.PartAlert, wire.ConstraintAlert)),
    "change": ("fairness.changed", (notices.ChangeAlert,)),
    "merged": ("fairness.violated_somewhere", (notices.MergedAlert,)),
    "job-merged": ("fairness.job_violated_somewhere", (notices.JobMergedAlert,)),
    "trigger": ("fairness.trigger", (notices.TriggerAlert,)),
    "shield-intervention": ("shield.intervention", (wire.Intervention,)),
    "shield-status": ("shield.status", (wire.ShieldStatus,)),
    "dead-letter": ("pipeline.dead_letter", (wire.DeadLetter,)),
    "seal": ("pipeline.seal", (wire.Seal,)),
    "undelivered": ("pipeline.undelivered", (wire.Undelivered,)),
}
"""Schema name → its title and the Structs of the records it describes (several: any one of them)."""

ALERT_DESCRIPTION = (
    "A change of verdict: of one part (violation, recovery, certification or its loss; the part's fields at the top "
    "level) or of a delayed-impact constraint for one group. On <alerts>, or alerts.jsonl."
)


def record_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the records `name` describes, with every Struct it uses in `$defs`."""
    title, structs = RECORDS[name]
    (refs, components) = msgspec.json.schema_components(structs, ref_template="#/$defs/{name}")
    if len(structs) == 1:
        body = components.pop(structs[0].__name__)
        body.pop("title", None)
    else:
        types = sorted({kind for struct in structs for kind in _types(components[struct.__name__])})
        body = {"description": ALERT_DESCRIPTION, "type": "object", "properties": {"type": {"enum": types}}, "required": ["type"], "oneOf": list(refs)}
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": schema_uri(name), "title": title, **body}
    used = _referenced(schema, components)
    if used:
        schema["$defs"] = {key: components[key] for key in sorted(used)}
    return _cleaned(schema)


def _cleaned(value: Any) -> Any:
    """Every description with its docstring's indentation taken out, as `inspect.cleandoc` does: the files are the
    same whether or not the msgspec (or Python) at hand dedents docstrings itself."""
    if isinstance(value, dict):
        return {key: inspect.cleandoc(item) if key == "description" and isinstance(item, str) else _cleaned(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cleaned(item) for item in value]
    return value


def _types(struct_schema: dict[str, Any]) -> list[str]:
    """The record types a Struct's schema allows in its `type` field."""
    field = struct_schema["properties"]["type"]
    return list(field.get("enum", [field.get("const")]))


def _referenced(node: Any, components: dict[str, Any], found: set[str] | None = None) -> set[str]:
    """The names of the components `node` refers to, directly or through others."""
    found = set() if found is None else found
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name not in found:
                found.add(name)
                _referenced(components[name], components, found)
        for value in node.values():
            _referenced(value, components, found)
    elif isinstance(node, (list, tuple)):
        for value in node:
            _referenced(value, components, found)
    return found


def schema_text(name: str) -> str:
    """The schema as its file holds it."""
    return json.dumps(record_schema(name), indent=2, ensure_ascii=False) + "\n"


def write(folder: Path = SCHEMA_DIR) -> list[Path]:
    """Write every record schema into `folder`; return the files written."""
    written = []
    for name in RECORDS:
        path = folder / f"{name}.schema.json"
        path.write_text(schema_text(name))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write():
        print(f"wrote {path}")
