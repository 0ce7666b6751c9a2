"""`publish.every`: every evaluation is still judged, and a run with a cadence writes exactly the alerts of a run without
one, a subset of its estimate records (each equal to the full run's of the same id), every estimate at which a part's
status or violating pair changed, one per period or n closes, the last one, and the same run summary."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from fairstream.compiler.load import load_plans, parse_spec
from fairstream.compiler.plan import Plan, build_plan
from fairstream.connectors.files import RecordSource
from fairstream.connectors.synthetic.seminar import seminar_events
from fairstream.dataflow.flow import build_flow, count_groups
from fairstream.engine.api import run_main
from fairstream.lab.bench.database import ALGORITHM, SPEC
from fairstream.lab.studies.runs import monitor_records, tuned_plan
from fairstream.language.yaml_file import read_yaml
from fairstream.monitoring.close_runs import runs_closes
from fairstream.records.errors import SpecError
from fairstream.records.timefmt import DAY, time_parser
from fairstream.runner import FileInput, FileOutput, FileRun, Job, execute
from tests.conftest import SPECS
from tests.docs.markdown import ROOT, blocks
from tests.list_sink import ListSink

ESTIMATE = "fairness.estimate"


def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Monitor records without the wall clock and the hash chain (which differ when fewer records are linked)."""
    return [{k: v for k, v in record.items() if k not in ("emitted_at", "chain")} for record in records if record["type"] != "pipeline.seal"]


def standing(record: dict[str, Any]) -> dict[str, Any]:
    """What a reader must not miss a change of: each part's status, and the pair its violation names."""
    return {part: (body["status"], body["pair"] if body["violated"] else None) for part, body in record["parts"].items()}


def check_subset(full: list[dict[str, Any]], cadenced: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Assert the cadence run's records are the full run's alerts and some of its estimates; return both runs' estimates."""
    full, cadenced = comparable(full), comparable(cadenced)
    by_id = {record["alert_id"]: record for record in full}
    assert all(by_id.get(record["alert_id"]) == record for record in cadenced)
    assert [r for r in cadenced if r["type"] != ESTIMATE] == [r for r in full if r["type"] != ESTIMATE]
    every = [r for r in full if r["type"] == ESTIMATE]
    written = [r for r in cadenced if r["type"] == ESTIMATE]
    assert written[0] == every[0] and written[-1] == every[-1]
    ids = {record["alert_id"] for record in written}
    changes = [now for before, now in zip(every, every[1:]) if standing(before) != standing(now)]
    assert all(record["alert_id"] in ids for record in changes)
    return every, written


def seminar_plan(every: tuple[str, int] | None, hysteresis: float = 0.0):
    plan = tuned_plan(SPEC, threshold=0.03)
    monitor = replace(plan.monitor, rule=replace(plan.monitor.rule, hysteresis=hysteresis), publishing=replace(plan.monitor.publishing, every=every))
    return replace(plan, monitor=monitor)


@pytest.fixture(scope="module")
def seminar_events_20k() -> list[dict[str, Any]]:
    return seminar_events(ALGORITHM, 0, 20_000)


@pytest.mark.parametrize("hysteresis", [0.0, 0.01])
def test_a_cadence_in_closes_writes_every_alert_and_every_change_and_one_estimate_per_n_closes(seminar_events_20k, hysteresis):
    full = monitor_records(seminar_plan(None, hysteresis), seminar_events_20k)
    cadenced = monitor_records(seminar_plan(("closes", 1000), hysteresis), seminar_events_20k)
    every, written = check_subset(full, cadenced)
    assert sum(record["type"] != ESTIMATE for record in comparable(full)) >= 10  # the verdict turns, and back
    positions = [index for index, record in enumerate(every) if record["alert_id"] in {r["alert_id"] for r in written}]
    assert max(b - a for a, b in zip(positions, positions[1:])) <= 1000
    assert len(written) < len(every) / 100


def test_a_cadence_in_event_time_writes_the_first_evaluation_of_each_period(seminar_events_20k):
    every, written = check_subset(monitor_records(seminar_plan(None), seminar_events_20k), monitor_records(seminar_plan(("time", 7 * DAY)), seminar_events_20k))
    ids = {record["alert_id"] for record in written}
    weeks: dict[int, dict[str, Any]] = {}
    for record in every:
        weeks.setdefault(time_parser("iso")(record["event_time"]) // (7 * DAY), record)
    assert all(record["alert_id"] in ids for record in weeks.values())


def with_publish(name: str, tmp_path: Path, **changes: Any) -> Path:
    spec = yaml.safe_load((SPECS / f"{name}.yaml").read_text())
    for section, value in changes.items():
        spec[section] = {**spec.get(section, {}), **value} if section == "publish" else value
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def run(spec: Path | str, compas_csv: Path, out: Path):
    tally = execute(Job(spec=str(spec), input=FileInput(path=str(compas_csv), format="compas"), output=FileOutput(out_dir=str(out))))
    records = FileRun(out).read("alerts.jsonl") + FileRun(out).read("estimates.jsonl")
    return tally, sorted(records, key=lambda record: (record["event_time"], record["type"] == ESTIMATE))


@pytest.mark.parametrize(
    ("name", "changes"),
    [
        ("compas_equalized_odds", {"publish": {"every": "30d"}}),
        ("compas_equalized_odds", {"publish": {"every": "250 closes"}, "evaluate": {"on": "close"}}),
        ("compas_equalized_odds_confident", {"publish": {"every": "90d"}}),
    ],
    ids=["daily-30d", "on-close-250", "confident-90d"],
)
def test_compas_with_a_cadence_gives_the_same_alerts_and_run_summary(compas_csv, tmp_path, name, changes):
    base = tmp_path / "base"
    base.mkdir()
    reference = with_publish(name, base, **{section: value for section, value in changes.items() if section != "publish"})
    cadenced_dir = tmp_path / "cadenced"
    cadenced_dir.mkdir()
    cadenced = with_publish(name, cadenced_dir, **changes)
    full_tally, full = run(reference, compas_csv, tmp_path / "full")
    few_tally, few = run(cadenced, compas_csv, tmp_path / "few")
    every, written = check_subset(full, few)
    assert len(written) < len(every) / 5
    (full_monitor,), (few_monitor,) = full_tally.monitors.values(), few_tally.monitors.values()
    assert few_monitor.first_violations() == full_monitor.first_violations() != []
    assert (few_monitor.violations, few_monitor.recoveries) == (full_monitor.violations, full_monitor.recoveries)
    assert comparable([few_monitor.last])[0] == comparable([full_monitor.last])[0]


def test_a_cadence_in_closes_needs_verdicts_on_every_close(tmp_path):
    path = with_publish("compas_equalized_odds", tmp_path, publish={"every": "100 closes"})
    with pytest.raises(SpecError, match=r"publish.every in closes needs evaluate: \{on: close\}"):
        load_plans([str(path)])


def test_the_outputs_page_example_is_a_spec_section_that_runs(compas_csv, tmp_path):
    page = (ROOT / "docs" / "outputs.md").read_text()
    (shown,) = blocks(page[page.index("## Fewer estimate records") :], "yaml")
    (tmp_path / "shown.yaml").write_text(shown)
    path = with_publish("compas_equalized_odds", tmp_path, **read_yaml(tmp_path / "shown.yaml"))  # YAML 1.2: `on` is a key
    (plan,) = load_plans([str(path)])
    assert (plan.monitor.on_close, plan.monitor.publishing.every) == (True, ("closes", 1000))
    _tally, records = run(path, compas_csv, tmp_path / "out")
    assert 2 <= sum(record["type"] == ESTIMATE for record in records) < 100  # thousands of closes, a few estimates


def applications(seed: int, count: int = 3000) -> list[dict[str, Any]]:
    """Applicants of four groups, one of them rare, each accepted within a day or never, at rates that drift apart
    and back: verdicts turn, small cells come out of suppression, and small groups tie."""
    rng = random.Random(seed)
    events, time = [], 1_700_000_000
    for index in range(count):
        time += rng.randrange(1, 120)
        group = rng.choices("abcd", weights=(50, 30, 15, 5))[0]
        drift = 0.25 * math.sin(index / 300) * (group == "b")
        events.append({"event": "APPLY", "id": f"p{index}", "t": time, "group": group})
        if rng.random() < 0.5 + drift:
            events.append({"event": "ACCEPT", "id": f"p{index}", "t": time + rng.randrange(1, 3600)})
    return sorted(events, key=lambda event: event["t"])


def application_plans(every: str | None) -> list[Plan]:
    """Three monitors of the applications that count alike (so they share one merge), at thresholds 0.03, 0.05 and 0.08,
    the last with hysteresis."""
    plans = []
    for name, threshold, hysteresis in (("tight", 0.03, 0.0), ("middle", 0.05, 0.0), ("loose", 0.08, 0.02)):
        spec = {
            "monitor": name,
            "input": {"time": "t", "time_format": "epoch_s", "key": "id", "kind": "event", "kinds": {"APPLY": {"group": "str"}, "ACCEPT": {}}},
            "trial": {"opens_on": ["APPLY"], "close_after": "1d"},
            "variables": {"group": {"first": "APPLY", "field": "group"}, "accepted": {"exists": "ACCEPT"}},
            "metric": {"type": "demographic_parity", "group": "group", "prediction": "accepted", "groups": "all", "threshold": threshold},
            "estimator": {"prior": 0.5, "confidence": 4, "min_trials": 3, "hysteresis": hysteresis},
            "evaluate": {"on": "close"},
            "publish": {"min_cell": 5, **({"every": every} if every else {})},
        }  # fmt: skip
        plans.append(build_plan(parse_spec(spec)))
    return plans


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("every", ["50 closes", "1h"])
def test_closes_judged_a_batch_at_once_write_what_closes_judged_one_by_one_write(seed, every):
    """The batch path (several monitors on one merge, groups that tie, cells that leave suppression, hysteresis) writes
    exactly the alerts of evaluating every close in full and a subset of its estimates, every change among them."""
    events = applications(seed)
    cadenced = application_plans(every)
    assert count_groups(cadenced) == [[0, 1, 2]] and runs_closes([plan.monitor for plan in cadenced])
    full, few = [], []
    run_main(build_flow(application_plans(None), RecordSource(lambda: events, batch_size=500), ListSink(full)))
    run_main(build_flow(cadenced, RecordSource(lambda: events, batch_size=500), ListSink(few)))
    for plan in cadenced:
        name = plan.spec.monitor
        every_close, written = check_subset([r for r in full if r.get("monitor") == name], [r for r in few if r.get("monitor") == name])
        assert len(every_close) == 3000 and len(written) < 1000
    assert sum(record["type"] in ("fairness.violation", "fairness.recovered") for record in full) >= 6
