"""The Prometheus gauges a dashboard graphs hold the last evaluation's numbers: per part the gap the verdict tests,
the threshold and a one-hot status, per group the published estimate and trials (NaN for a suppressed cell)."""

from __future__ import annotations

import math

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from fairstream import metrics
from fairstream.runner import run_file


def samples(monitor: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(generate_latest(metrics.REGISTRY).decode()):
        for sample in family.samples:
            if sample.labels.get("monitor") == monitor:
                found[(sample.name, tuple(sorted((k, v) for k, v in sample.labels.items() if k != "monitor")))] = sample.value
    return found


def test_the_gauges_hold_the_last_evaluations_numbers(compas_csv, tmp_path):
    last = run_file("compas_equalized_odds", compas_csv, tmp_path).read("estimates.jsonl")[-1]
    found = samples("compas-equalized-odds")
    suppressed = 0
    for part, body in last["parts"].items():
        assert found[("fairstream_gap", (("part", part),))] == body["gap"]  # point verdicts test the MAP gap
        assert found[("fairstream_threshold", (("part", part),))] == 0.1
        current = [dict(labels)["status"] for (name, labels), value in found.items() if name == "fairstream_status" and dict(labels)["part"] == part and value == 1]
        assert current == [body["status"]]
        for group, cell in body["groups"].items():
            estimate = found[("fairstream_group_estimate", (("group", group), ("part", part)))]
            trials = found[("fairstream_group_trials", (("group", group), ("part", part)))]
            if cell.get("suppressed"):
                suppressed += 1
                assert math.isnan(estimate) and math.isnan(trials)
            else:
                assert (estimate, trials) == (cell["estimate"], cell["trials"])
    assert suppressed > 0  # COMPAS's smallest groups are withheld at the end, and so are their gauges
