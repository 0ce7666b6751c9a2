"""The shipped per-applicant spec (`specs/credit_applications.yaml`) on the credit stream of `fairstream synth credit`:
each of its six properties against pandas, which rebuilds every (applicant, branch) trial from the raw events and
selects, at each daily evaluation, the applications of the last 30 days that had closed by then."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.compiler.load import load_file_plans
from tests.conftest import SPECS

DAY_MS = 86_400_000
SPEC = SPECS / "credit_applications.yaml"


@pytest.fixture(scope="module")
def credit_run(tmp_path_factory):
    """The synthesized stream and the estimates of every monitor of the spec, from the two commands a user runs."""
    tmp = tmp_path_factory.mktemp("credit")
    runner = CliRunner()
    made = runner.invoke(cli, ["synth", "credit", "--applicants", "2500", "--seed", "7", "--out", str(tmp / "credit.jsonl")])
    assert made.exit_code == 0, made.output
    ran = runner.invoke(cli, ["run", str(SPEC), "--input", str(tmp / "credit.jsonl"), "--out", str(tmp / "out")])
    assert ran.exit_code == 0, ran.output
    events = [json.loads(line) for line in (tmp / "credit.jsonl").read_text().splitlines()]
    estimates = [json.loads(line) for line in (tmp / "out" / "estimates.jsonl").read_text().splitlines()]
    return events, estimates


def trials_of(events: list[dict]) -> pd.DataFrame:
    """One row per (applicant, branch) with a real application: when it opened and closed (ms), and its values."""
    frame = pd.DataFrame(events)
    frame["ms"] = (pd.to_datetime(frame.time, utc=True) - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(milliseconds=1)
    frame["trial"] = frame.applicant_id + "/" + frame.branch
    real = frame[(frame.event == "APPLY") & (frame.amount > 0)].groupby("trial").first()
    frame = frame.join(real.ms.rename("opened"), on="trial", how="inner")
    finals = frame[(frame.event == "DECISION") & (frame.final == True) & (frame.ms >= frame.opened)].groupby("trial").ms.min()  # noqa: E712
    frame["closes"] = frame.trial.map(finals).fillna(frame.opened + 90 * DAY_MS)
    inside = frame[(frame.ms >= frame.opened) & (frame.ms <= frame.closes)]
    decisions = inside[inside.event == "DECISION"].groupby("trial").last()
    contacts = inside[(inside.event == "CONTACT") & (inside.ms - inside.opened <= 30 * DAY_MS)].groupby("trial").size()
    trials = pd.DataFrame({"opened": real.ms, "group": real.group, "amount": real.amount, "score": real.score})
    trials["closed"] = trials.index.map(frame.groupby("trial").closes.first())
    trials["approved"] = decisions.approved.reindex(trials.index)
    trials["days"] = (decisions.ms.reindex(trials.index) - trials.opened) / DAY_MS
    trials["risk_band"] = np.where(trials.score <= 3, "high", "standard")
    trials["contacts"] = contacts.reindex(trials.index).fillna(0)
    return trials


def reference(trials: pd.DataFrame, name: str) -> dict[str, dict[str, list[float]]]:
    """Per part and group of the named property: [hits, trials] of a rate, or [mean, trials] of a mean outcome."""
    decided = trials.dropna(subset=["approved"])
    approved = decided.approved.astype(bool)
    if name in ("approval", "decided-within-a-week"):
        hit = approved if name == "approval" else decided.days <= 7
        return {"selection_rate": {g: [int(h.sum()), len(h)] for g, h in hit.groupby(decided.group)}}
    if name == "approval-by-risk-band":
        return {
            f"selection_rate[risk_band={band}]": {g: [int(h.sum()), len(h)] for g, h in approved[decided.risk_band == band].groupby(decided.group)}
            for band in sorted(set(decided.risk_band))
        }
    outcome = {"days-to-decision": decided.days, "approved-amount": approved * decided.amount, "contacts": decided.contacts}[name]
    return {"mean_outcome": {g: [x.mean(), len(x)] for g, x in outcome.groupby(decided.group)}}


def published(record: dict, min_cell: int) -> dict[str, dict[str, list[float]]]:
    """The record's cells as `reference` gives them, those too small to publish left out on both sides."""
    out = {}
    for part, body in record["parts"].items():
        if part.endswith("[standardized]"):
            continue
        cells = {g: [c["hits"] if "hits" in c else c["estimate"], c["trials"]] for g, c in body["groups"].items() if not c.get("suppressed")}
        if cells:
            out[part] = cells
    return out


@pytest.mark.parametrize("name", ["approval", "approval-by-risk-band", "decided-within-a-week", "days-to-decision", "approved-amount", "contacts"])
def test_each_property_of_the_credit_spec_equals_pandas_over_the_applications_of_its_window(credit_run, name):
    events, estimates = credit_run
    trials = trials_of(events)
    min_cell = load_file_plans(SPEC)[0].spec.publish.min_cell
    mine = [record for record in estimates if record["monitor"] == f"credit-applications.{name}"]
    checked = 0
    for record in mine[::5]:
        tick = int(pd.Timestamp(record["event_time"]).timestamp() * 1000)
        covered = trials[(trials.opened > tick - 30 * DAY_MS) & (trials.opened <= tick) & (trials.closed <= tick)]
        expected = {
            part: {g: cell for g, cell in cells.items() if cell[1] >= min_cell} for part, cells in reference(covered, name).items()
        }
        expected = {part: cells for part, cells in expected.items() if cells}
        got = published(record, min_cell)
        assert got.keys() == expected.keys(), record["event_time"]
        for part, cells in expected.items():
            assert got[part].keys() == cells.keys(), (record["event_time"], part)
            for group, (value, count) in cells.items():
                assert got[part][group][1] == count and got[part][group][0] == pytest.approx(value, rel=1e-9), (record["event_time"], part, group)
        checked += bool(expected)
    assert checked > 20, name


def test_the_stream_has_what_the_properties_look_for(credit_run):
    """Drafts that open no trial, undecided applications, contacts after 30 days, and applicants at both branches."""
    events, _ = credit_run
    trials = trials_of(events)
    frame = pd.DataFrame(events)
    assert (frame[frame.event == "APPLY"].amount == 0).sum() > 100
    assert trials.approved.isna().sum() > 50
    assert (trials.index.str.split("/").str[0].value_counts() == 2).sum() > 300
    assert trials.groupby("group").days.mean()["b"] - trials.groupby("group").days.mean()["a"] > 2
