"""Every spec the language accepts runs on every stream: generated specs (each metric type, verdict, window, publishing
setting, listed, `all`, intersectional and proxy groups, partly seen labels) over generated streams (labels whose delay
depends on the outcome, early, late or never; ties; empty groups and groups of one trial). No run raises; every record
fits its Struct; every interval holds the point it names; a status agrees with the interval it is published with; and
the final counts of plain rates equal a pandas computation over the same applicants."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from fairstream.compiler.load import check_specs
from fairstream.records import wire
from fairstream.records.errors import SpecError
from fairstream.runner import run_file
from tests.spec_space import CLOSE_AFTER_HOURS, HOUR, Applicant, applicants, events_of, specs

OUTPUTS = ("alerts.jsonl", "estimates.jsonl", "dead_letters.jsonl", "seals.jsonl")
SLACK = 1e-9
RATE_PARTS = {
    "selection_rate": ("approved", None),
    "true_positive_rate": ("approved", "repaid"),
    "false_positive_rate": ("approved", "not repaid"),
    "positive_predictive_value": ("repaid", "approved"),
}


def run_generated(folder: Path, spec: dict[str, Any], people: list[Applicant]) -> dict[str, list[dict[str, Any]]]:
    """Run the spec over the applicants' events and read back every output file."""
    try:
        check_specs(spec)
    except SpecError:
        reject()
    folder.mkdir(parents=True)
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    with (folder / "events.jsonl").open("wb") as out:
        out.writelines(orjson.dumps(event) + b"\n" for event in events_of(people))
    run_file(folder / "spec.yaml", folder / "events.jsonl", folder / "out")
    outputs = {}
    for name in OUTPUTS:
        path = folder / "out" / name
        outputs[name] = [orjson.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []
    return outputs


def intervals_of(body: dict[str, Any]):
    """(where, interval, the point it names, widened) for the part and each of its cells."""
    yield "part", body.get("interval"), body.get(body.get("interval_of") or ""), body.get("interval_widened", False)
    for group, cell in body["groups"].items():
        yield group, cell.get("interval"), cell.get(cell.get("interval_of") or ""), cell.get("interval_widened", False)


def check_part(part: str, body: dict[str, Any], *, turned_violated: bool = False) -> None:
    """An interval holds its point; `violated` agrees with the status; a violation turns only where the interval it is
    published with lies beyond the threshold, and a ratio is certified only where its interval lies within it; an
    anytime ratio is violated exactly where its interval ends below τ and certified exactly where it starts at τ or above.

    (A gap is certified by two one-sided tests at the whole α, a 1 − 2α interval per pair, while the interval published
    is the named pair's at its share of α: the certificate is not read off the published interval.)"""
    for where, interval, point, _ in intervals_of(body):
        if interval is not None and point is not None:
            assert interval[0] - SLACK <= point <= interval[1] + SLACK, f"{part} {where}: {point} outside {interval}"
    if "violated" in body and "constraint" not in body:
        assert (body["status"] == "violated") == bool(body["violated"]), f"{part}: status {body['status']}, violated {body['violated']}"
    interval, threshold, of = body.get("interval"), body.get("threshold"), body.get("interval_of")
    if interval is not None and of == "raw_ratio" and body.get("interval_validity") == "anytime" and not body.get("interval_widened"):
        # the anytime ratio's verdict is read off the interval it publishes: the two agree at every look
        complete = not any(cell.get("below_floor") for cell in body["groups"].values())
        assert bool(body["violated"]) == (interval[1] < threshold), f"{part}: violated {body['violated']}, interval {interval}"
        assert (body["status"] == "certified") == (interval[0] >= threshold and complete), f"{part}: {body['status']}, interval {interval}"
    if interval is None or threshold is None or body.get("interval_widened") or body.get("interval_validity") != "fixed_time":
        return  # a widened interval is not the one the verdict was reached on; anytime verdicts rest on the tests
    if turned_violated and of in ("raw_gap", "gap"):
        assert interval[0] > threshold - SLACK, f"{part}: violated, but its gap's interval {interval} reaches below {threshold}"
    if turned_violated and of == "raw_ratio":
        assert interval[1] < threshold + SLACK, f"{part}: violated, but its ratio's interval {interval} reaches above {threshold}"
    if body["status"] == "certified" and of == "raw_ratio":
        assert interval[0] >= threshold - SLACK, f"{part}: certified, but its ratio's interval {interval} reaches below {threshold}"


def reference_counts(people: list[Applicant], spec: dict[str, Any]) -> pd.DataFrame:
    """Each applicant's trial as the spec defines it, from the drawn facts alone: group, approved, repaid."""
    closes_on_decision = "close_on" in spec["trial"]
    rows = []
    for person in people:
        decided = person.decided_after is not None and person.decided_after < CLOSE_AFTER_HOURS
        ends = person.decided_after if decided and closes_on_decision else CLOSE_AFTER_HOURS
        repaid = person.repaid_after is not None and person.repaid_after < ends
        rows.append({"group": person.group, "approved": decided and person.approved, "repaid": repaid, "closes": person.opened + ends * HOUR})
    return pd.DataFrame(rows, columns=["group", "approved", "repaid", "closes"])


def plain_counts(spec: dict[str, Any]) -> bool:
    """Whether the last estimate's cells are plain counts of the closed trials a pandas reference can give."""
    metric, estimator = spec["metric"], spec["estimator"]
    return (
        metric["type"] in ("demographic_parity", "equal_opportunity", "equalized_odds", "predictive_parity", "disparate_impact")
        and metric["group"] == "group"
        and isinstance(metric.get("label", ""), str)
        and spec["window"]["kind"] == "cumulative"
        and estimator["verdict"] != "anytime"
        and spec["publish"]["min_cell"] == 1
    )


def check_final_counts(people: list[Applicant], spec: dict[str, Any], last: dict[str, Any]) -> None:
    trials = reference_counts(people, spec)
    assert last["trials"]["closed"] + last["trials"].get("unfinished", 0) == len(trials)
    closed = trials[trials.closes <= pd.Timestamp(last["event_time"]).value // 1_000_000]
    listed = spec["metric"]["groups"]
    for part, body in last["parts"].items():
        hit, given_ = RATE_PARTS[part]
        rows = closed if given_ is None else closed.query(given_)
        if listed != "all":
            rows = rows[rows.group.isin(listed)]
        expected = {group: (int(rows[hit].sum()), len(rows)) for group, rows in rows.groupby("group") if len(rows)}
        published = {group: (cell["hits"], cell["trials"]) for group, cell in body["groups"].items()}
        assert published == expected, f"{part}: {published} against pandas {expected}"


def check_run(people: list[Applicant], spec: dict[str, Any], outputs: dict[str, list[dict[str, Any]]]) -> None:
    for name, records in outputs.items():
        for record in records:
            wire.check(record)
            for key in ("interval",):
                assert not (isinstance(record.get(key), list) and any(map(math.isnan, record[key]))), name
    for record in outputs["estimates.jsonl"]:
        for part, body in record["parts"].items():
            check_part(part, body)
    for alert in outputs["alerts.jsonl"]:
        if alert["type"] in ("fairness.violation", "fairness.recovered") and "groups" in alert:
            check_part(alert["part"], alert, turned_violated=alert["type"] == "fairness.violation")
    estimates = outputs["estimates.jsonl"]
    if estimates and plain_counts(spec):
        check_final_counts(people, spec, estimates[-1])


EXAMPLES = settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@EXAMPLES
@given(spec=specs(), people=applicants(), run=st.uuids())
def test_every_generated_spec_runs_on_every_generated_stream(tmp_path_factory, spec, people, run):
    outputs = run_generated(tmp_path_factory.mktemp("run") / run.hex, spec, people)
    check_run(people, spec, outputs)


@pytest.mark.slow
@pytest.mark.timeout(3600)
@settings(max_examples=1500, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(spec=specs(), people=applicants(), run=st.uuids())
def test_every_generated_spec_runs_at_length(tmp_path_factory, spec, people, run):
    outputs = run_generated(tmp_path_factory.mktemp("run") / run.hex, spec, people)
    check_run(people, spec, outputs)
