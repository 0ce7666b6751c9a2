"""Read a spec file: YAML syntax, then the pydantic models, then the semantic checks; every problem is reported with its field path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from pipeline.errors import SpecError
from pipeline.spec.models import Spec
from pipeline.spec.plan import Plan, build_plan


def _location(loc: tuple[Any, ...]) -> str:
    return " -> ".join(str(part) for part in loc)


def _message(error: dict[str, Any]) -> str:
    message = error["msg"].removeprefix("Value error, ")
    value = error.get("input")
    if error["type"] not in ("missing", "value_error", "model_type") and not isinstance(value, (dict, list)):
        message += f"; got {value!r}"
    return message


def parse_spec(data: Any, source: str = "<spec>") -> Spec:
    """Validate already-parsed YAML data against the spec models."""
    if not isinstance(data, dict):
        raise SpecError(source, [("", f"a spec is a YAML mapping; got {type(data).__name__}")])
    try:
        return Spec.model_validate(data)
    except ValidationError as err:
        issues = [(_location(error["loc"]), _message(error)) for error in err.errors()]
        raise SpecError(source, issues) from None


def read_yaml(path: str | Path) -> Any:
    """The YAML document in a file, with syntax errors reported by line and column."""
    source = str(path)
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise SpecError(source, [("", f"cannot read the spec: {err.strerror}")]) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise SpecError(source, [("", f"{where}invalid YAML: {getattr(err, 'problem', err)}")]) from None


def load_plan(path: str | Path) -> Plan:
    """Load, validate and compile a spec file; raises `SpecError` listing every problem."""
    source = str(path)
    return build_plan(parse_spec(read_yaml(path), source), source)
