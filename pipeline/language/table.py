"""A plain table as a stream: a spec with only `monitor` and `metric` (or `metrics`), whose variable names are columns,
reads each row as one closed trial, in row order, as fairlearn's MetricFrame reads a DataFrame (pure).

    monitor: german-approvals
    metric: {type: demographic_parity, group: sex, prediction: approved, groups: all, threshold: 0.1}

The source numbers each row in `ROW` (`input.numbered`), which is the row's dependence key and its time in
milliseconds, so no date or id has to be invented; every row is evaluated as it closes (`evaluate: {on: close}`)
unless the spec says otherwise.
"""

from __future__ import annotations

from typing import Any

ROW = "_row"
"""The field the source adds to each row of a table: its number, from 0."""

KIND = "ROW"
"""The one event kind of a table."""

STREAM_SECTIONS = ("input", "trial", "variables")
"""What a table spec leaves out: the stream it reads is the table's rows."""

ROLES = {
    "group": "str",
    "condition": "str",
    "prediction": "bool",
    "label": "bool",
    "given": "bool",
    "observed_when": "bool",
    "outcome": "float",
    "score": "float",
    "supply": "float",
    "demand": "float",
    "propensity": "float",
    "weight": "float",
}
"""The type of the column each metric field names."""


def is_table_spec(data: Any) -> bool:
    """Whether a spec's data names a metric but no stream: no input, trial or variables section."""
    return isinstance(data, dict) and ("metric" in data or "metrics" in data) and not any(section in data for section in STREAM_SECTIONS)


def table_spec(data: dict[str, Any]) -> dict[str, Any]:
    """The full spec a table spec stands for: one event kind whose fields are the columns the metrics name, a trial per
    row closed by it, a variable per column.

    >>> spec = table_spec({"monitor": "m", "metric": {"type": "demographic_parity", "group": "sex", "prediction": "hired"}})
    >>> spec["input"]["kinds"], spec["variables"]["sex"], spec["evaluate"]
    ({'ROW': {'sex': 'str', 'hired': 'bool'}}, {'first': 'ROW', 'field': 'sex'}, {'on': 'close'})
    """
    columns: dict[str, str] = {}
    for metric in _metrics(data):
        for role, kind in ROLES.items():
            for name in _names(metric.get(role)):
                columns.setdefault(name, kind)
        label = metric.get("label")
        if isinstance(label, dict):
            for role in ("variable", "observed_when"):
                for name in _names(label.get(role)):
                    columns.setdefault(name, "bool")
    return {
        **data,
        "input": {"time": ROW, "time_format": "epoch_ms", "key": ROW, "numbered": True, "max_future": None, "kinds": {KIND: columns}},
        "trial": {"close_on": [KIND]},
        "variables": {name: {"first": KIND, "field": name} for name in columns},
        "evaluate": data.get("evaluate", {"on": "close"}),
    }


def _metrics(data: dict[str, Any]) -> list[dict[str, Any]]:
    if isinstance(data.get("metric"), dict):
        return [data["metric"]]
    entries = data.get("metrics")
    return [entry["metric"] for entry in entries if isinstance(entry, dict) and isinstance(entry.get("metric"), dict)] if isinstance(entries, list) else []


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [name for name in value if isinstance(name, str)]
    return []

