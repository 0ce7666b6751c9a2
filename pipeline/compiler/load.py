"""Read a spec file: YAML syntax, then the pydantic models, then the semantic checks; every problem is reported with its field path."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

import yaml
from pydantic import BaseModel, ValidationError

from fairstream.compiler.plan import Plan, build_plan
from fairstream.language.models import MetricEntry, Spec
from fairstream.language.table import is_table_spec, table_spec
from fairstream.language.yaml_file import find_spec, read_yaml
from fairstream.records.chain import spec_hash
from fairstream.records.errors import SpecError


def _location(loc: tuple[Any, ...]) -> str:
    return " -> ".join(str(part) for part in loc)


def _allowed_fields(loc: tuple[Any, ...]) -> list[str]:
    """Field names of the model that `loc` (ending in the unknown field) points into."""
    model: Any = Spec
    for part in loc[:-1]:
        if not isinstance(model, type) or not issubclass(model, BaseModel):
            return []
        field = model.model_fields.get(str(part))
        if field is None:
            continue  # a dict key such as a variable name: stay on the value's model
        model = _model_in(field.annotation)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return list(model.model_fields)
    return []


def _model_in(annotation: Any) -> Any:
    """The pydantic model inside an annotation such as `Metric`, `dict[str, Variable]` or `X | None`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in reversed(get_args(annotation)):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _message(error: dict[str, Any]) -> str:
    if error["type"] == "extra_forbidden":
        allowed = _allowed_fields(error["loc"])
        return f"unknown field {error['loc'][-1]!r}" + (f"; allowed: {', '.join(allowed)}" if allowed else "")
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
        raise _model_errors(source, err) from None


class _ModelErrors(SpecError):
    """The models refused a spec: its issues, and where each refused field is (to look past them for later faults)."""

    def __init__(self, source: str, issues: list[tuple[str, str]], locations: list[tuple[Any, ...]]):
        super().__init__(source, issues)
        self.locations = locations


def _model_errors(source: str, err: ValidationError) -> _ModelErrors:
    errors = err.errors()
    return _ModelErrors(source, [(_location(error["loc"]), _message(error)) for error in errors], [error["loc"] for error in errors])


def _without(data: dict[str, Any], locations: list[tuple[Any, ...]]) -> tuple[dict[str, Any], list[str]] | None:
    """The spec data with every refused field taken out (its default applies, if it has one), and the paths taken
    out; None when a refusal is of the whole spec. A location is followed as far as the data goes: pydantic appends
    the member of a union to it, and a missing field's location ends past the data."""
    cleaned = copy.deepcopy(data)
    removed = []
    for loc in locations:
        parent, node, path = None, cleaned, []
        for part in loc:
            if not (isinstance(node, dict) and part in node):
                break
            parent, node, path = node, node[part], [*path, part]
        if parent is None:
            return None
        parent.pop(path[-1], None)
        removed.append(_location(tuple(path)))
    return cleaned, removed


def _about(path: str, message: str, removed: list[str]) -> bool:
    """Whether a later finding concerns a field taken out: it lies under one, or names one (`unknown variable 'x'`)."""
    return any(path.startswith(gone) or f"'{gone.rsplit(' -> ', 1)[-1]}'" in message for gone in removed)


def check_spec(data: Any, source: str = "<spec>") -> Plan:
    """Validate and compile a spec, reporting the faults of every phase at once: when the models refuse some fields,
    the semantic checks still run on the rest (the refused fields taken out), and their findings that do not concern
    a refused field are reported too."""
    try:
        return build_plan(parse_spec(data, source), source)
    except _ModelErrors as refused:
        issues = list(refused.issues)
        cleaned = _without(data, refused.locations)
        if cleaned is not None:
            rest, removed = cleaned
            try:
                build_plan(Spec.model_validate(rest), source)
            except ValidationError:
                pass  # a required field was refused: the later phase has nothing whole to check
            except SpecError as later:
                issues += [(path, message) for path, message in later.issues if not _about(path, message, removed)]
        raise SpecError(source, issues) from None


METRICS_ENTRY = tuple(MetricEntry.model_fields)
"""The fields of an entry of `metrics:` (`name`, `metric`, `estimator`)."""


def expand_metrics(data: Any, source: str) -> list[tuple[Any, int | None]]:
    """One spec per entry of a `metrics:` list (monitor `<monitor>.<name>`, the entry's metric, and its estimator or
    the spec's), each with its index in the list; the spec itself (index None) when it has no list."""
    if not isinstance(data, dict) or "metrics" not in data:
        return [(data, None)]
    entries, issues = data["metrics"], []
    if "metric" in data:
        issues.append(("metrics", "give metric (one property) or metrics (several), not both"))
    if not isinstance(entries, list) or not entries:
        issues.append(("metrics", f"a list of {{name, metric, estimator}} entries, at least one; got {entries!r}"))
        raise SpecError(source, issues)
    names = [entry.get("name") if isinstance(entry, dict) else None for entry in entries]
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            issues.append((f"metrics -> {index}", f"an entry is a mapping of {', '.join(METRICS_ENTRY)}; got {entry!r}"))
            continue
        for key in entry:
            if key not in METRICS_ENTRY:
                issues.append((f"metrics -> {index} -> {key}", f"unknown field {key!r}; allowed: {', '.join(METRICS_ENTRY)}"))
        for key in ("name", "metric"):
            if key not in entry:
                issues.append((f"metrics -> {index} -> {key}", "Field required"))
        if entry.get("name") is not None and names.count(entry["name"]) > 1:
            issues.append((f"metrics -> {index} -> name", f"two metrics are named {entry['name']!r}; their alerts would mix"))
    if issues:
        raise SpecError(source, issues)
    shared = {key: value for key, value in data.items() if key != "metrics"}
    return [
        (
            {
                **shared,
                "monitor": f"{data.get('monitor')}.{entry['name']}",
                "metric": entry["metric"],
                **({"estimator": entry["estimator"]} if "estimator" in entry else {}),
            },
            index,
        )
        for index, entry in enumerate(entries)
    ]


def _in_entry(path: str, index: int | None) -> str:
    """An issue's path in the file: the metric and estimator of an expanded entry live under `metrics -> <index>`."""
    if index is not None and (path.startswith("metric") or path.startswith("estimator")):
        return f"metrics -> {index} -> {path}"
    return path


def check_specs(data: Any, source: str = "<spec>") -> list[Plan]:
    """Every monitor of one spec file (one per entry of `metrics:`), with the faults of all of them reported at once."""
    plans, issues = [], []
    if is_table_spec(data):
        data = table_spec(data)
    for spec, index in expand_metrics(data, source):
        try:
            plans.append(check_spec(spec, source))
        except SpecError as err:
            issues += [issue for issue in ((_in_entry(path, index), message) for path, message in err.issues) if issue not in issues]
    if issues:
        raise SpecError(source, issues)
    return plans


def load_file_plans(path: str | Path) -> list[Plan]:
    """Load, validate and compile a spec file: one plan per metric; raises `SpecError` listing every problem of every phase."""
    plans = check_specs(read_yaml(path), str(path))
    raw = find_spec(path).read_bytes()
    return with_text(plans, raw.decode("utf-8", "replace"), spec_hash(raw))


def with_text(plans: list[Plan], text: str, digest: str) -> list[Plan]:
    """The plans with the spec's text and, in their monitor settings, the sha256 of its bytes (which every record names)."""
    return [dataclasses.replace(plan, text=text, monitor=dataclasses.replace(plan.monitor, spec_sha256=digest)) for plan in plans]


def load_plan(path: str | Path) -> Plan:
    """The plan of a spec file's first metric: all its metrics share the input, trial, variables and shield that the
    commands taking one plan read."""
    return load_file_plans(path)[0]


SHARED_SECTIONS = ("input", "dead_letters", "buckets")
"""What the monitors of one job share, since the events are read, parsed, clocked and split into buckets once."""


def spec_files(names: list[str] | tuple[str, ...]) -> list[Path]:
    """Spec files by path or bundled name, a folder standing for the `*.yaml` files in it (in name order)."""
    files: list[Path] = []
    for name in names:
        path = find_spec(name)
        files.extend(sorted(path.glob("*.y*ml")) if path.is_dir() else [path])
    return files


def load_plans(names: list[str] | tuple[str, ...] | list[str | Mapping[str, Any]]) -> list[Plan]:
    """Load several specs for one job: spec files, bundled names, folders, or specs given as mappings (`<spec 2>` in
    messages). Each must be valid, their names distinct, and their shared sections equal (the first spec that
    disagrees with the first one is named with it)."""
    placed: list[tuple[Plan, str]] = []
    for index, name in enumerate(names, 1):
        if isinstance(name, Mapping):
            text = yaml.safe_dump(dict(name), sort_keys=False)
            placed += [(plan, f"<spec {index}>") for plan in with_text(check_specs(dict(name), f"<spec {index}>"), text, spec_hash(text.encode()))]
            continue
        files = spec_files([name])
        if not files:
            raise SpecError(str(name), [("", "no spec file there")])
        placed += [(plan, str(path)) for path in files for plan in load_file_plans(path)]  # a file with metrics: gives several
    if not placed:
        raise SpecError(", ".join(map(str, names)), [("", "no spec file there")])
    plans = [plan for plan, _ in placed]
    first, first_source = plans[0].spec, placed[0][1]
    seen: dict[str, str] = {}
    for plan, source in placed:
        name = plan.spec.monitor
        if name in seen:
            raise SpecError(f"{seen[name]} and {source}", [("monitor", f"both specs name their monitor {name!r}; names must differ")])
        seen[name] = source
        for section in SHARED_SECTIONS:
            if getattr(plan.spec, section) != getattr(first, section):
                raise SpecError(
                    f"{first_source} and {source}",
                    [(section, f"monitors of one job read the same events, so their {section} sections must be equal")],
                )
    return plans
