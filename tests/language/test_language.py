"""Spec language constructs against independent pandas computations, through `fairstream run` on a file: a composite
dependence key, booleans counted as numbers and conditional values, and a prior and κ per conditional rate."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.compiler.load import parse_spec
from fairstream.compiler.plan import build_plan
from fairstream.records.errors import SpecError

BRANCHES = ("north", "south")


def credit_stream(seed: int = 3, applicants: int = 400) -> list[dict]:
    """Applications per applicant *and* branch: an applicant applies at one or both branches, then each branch decides."""
    rng = random.Random(seed)
    events = []
    minute = 0
    for applicant in range(applicants):
        group = rng.choice(["a", "b"])
        branches = BRANCHES if rng.random() < 0.65 else BRANCHES[:1]
        scores = {branch: rng.randint(0, 10) for branch in branches}
        for branch in branches:
            minute += 1
            events.append({"event": "APPLY", "applicant_id": f"A{applicant}", "branch": branch, "minute": minute, "group": group, "score": scores[branch]})
        for branch in branches:
            minute += 1
            approved = rng.random() < (0.7 if group == "a" else 0.45) * (0.6 + scores[branch] / 25)
            events.append({"event": "DECISION", "applicant_id": f"A{applicant}", "branch": branch, "minute": minute, "approved": approved})
    return events


SPEC = {
    "monitor": "credit-branches",
    "input": {
        "time": "minute",
        "time_format": "epoch_s",
        "key": ["applicant_id", "branch"],
        "kind": "event",
        "kinds": {"APPLY": {"group": "str", "score": "int"}, "DECISION": {"approved": "bool"}},
    },
    "trial": {"opens_on": ["APPLY"], "close_on": ["DECISION"]},
    "variables": {
        "group": {"first": "APPLY", "field": "group"},
        "approved": {"first": "DECISION", "field": "approved"},
        "score": {"first": "APPLY", "field": "score"},
    },
    "metric": {"type": "demographic_parity", "group": "group", "prediction": "approved", "threshold": 0.1},
    "estimator": {"prior": 0.5, "confidence": 0},
    "evaluate": {"on": "close"},
}


def trials_of(events: list[dict]) -> pd.DataFrame:
    """One row per (applicant, branch): its application's group and score, and its decision."""
    frame = pd.DataFrame(events)
    applications = frame[frame.event == "APPLY"][["applicant_id", "branch", "group", "score"]]
    return frame[frame.event == "DECISION"][["applicant_id", "branch", "approved"]].merge(applications, on=["applicant_id", "branch"])


def run_spec(tmp_path: Path, spec: dict, events: list[dict]) -> list[dict]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(event) + "\n" for event in events))
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "spec.yaml"), "--input", str(tmp_path / "events.jsonl"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return [json.loads(line) for line in (tmp_path / "out" / "estimates.jsonl").read_text().splitlines()]


def test_a_composite_key_makes_one_trial_per_applicant_and_branch(tmp_path):
    events = credit_stream()
    decisions = trials_of(events)
    expected = decisions.groupby("group").approved.agg(["sum", "count"])
    assert decisions.applicant_id.duplicated().any()  # some applicants have a trial at both branches
    last = run_spec(tmp_path, SPEC, events)[-1]
    cells = last["parts"]["selection_rate"]["groups"]
    for group in ("a", "b"):
        assert (cells[group]["hits"], cells[group]["trials"]) == (expected.loc[group, "sum"], expected.loc[group, "count"])
    assert last["trials"]["closed"] == len(decisions)


def test_one_field_of_the_two_keys_each_applicant_once(tmp_path):
    """The same stream keyed by applicant alone: both branches of an applicant fold into one trial, closed by the first
    decision; the second branch's decision finds no open trial."""
    spec = {**SPEC, "input": {**SPEC["input"], "key": "applicant_id"}}
    last = run_spec(tmp_path, spec, credit_stream())[-1]
    assert last["trials"]["closed"] == len({event["applicant_id"] for event in credit_stream()})


def test_a_record_missing_a_key_part_is_a_dead_letter_naming_the_key(tmp_path):
    events = credit_stream(applicants=5)
    del events[0]["branch"]
    run_spec(tmp_path, SPEC, events)
    letters = [json.loads(line) for line in (tmp_path / "out" / "dead_letters.jsonl").read_text().splitlines()]
    assert [letter["reason"] for letter in letters] == ["missing_field"]
    assert letters[0]["detail"] == "dependence key [applicant_id, branch]: a part is missing, empty, or not a string or an integer"


def test_booleans_count_as_numbers_and_conditionals_choose_in_variables(tmp_path):
    """A delayed-impact mean of `approved * 10 + (5 if score >= 5 else 0)` per group, against pandas."""
    spec = {
        **SPEC,
        "variables": {
            **SPEC["variables"],
            "points": {"first": "DECISION", "expr": "approved * 10"},
            "bonus": {"first": "APPLY", "expr": "5 if score >= 5 else 0"},
            "value": {"expr": "points + bonus"},
        },
        "metric": {"type": "delayed_impact", "group": "group", "outcome": "value", "threshold": 1},
    }
    events = credit_stream()
    trials = trials_of(events)
    trials["value"] = trials.approved.astype(int) * 10 + (trials.score >= 5) * 5
    expected = trials.groupby("group").value.mean()
    cells = run_spec(tmp_path, spec, events)[-1]["parts"]["mean_outcome"]["groups"]
    for group in ("a", "b"):
        assert cells[group]["estimate"] == pytest.approx(expected[group], rel=1e-12)


def test_each_conditional_rate_takes_its_own_prior_and_kappa(tmp_path):
    """Equalized odds with κ = 100 and γ = 0.2 for the true-positive rate only: (hits + γκ)/(trials + κ) per group there,
    the plain ratio for the false-positive rate, against pandas."""
    spec = {
        **SPEC,
        "variables": {**SPEC["variables"], "good": {"first": "APPLY", "expr": "score >= 5"}},
        "metric": {"type": "equalized_odds", "group": "group", "prediction": "approved", "label": "good", "threshold": 0.1},
        "estimator": {"prior": 0.5, "confidence": 0, "parts": {"true_positive_rate": {"prior": 0.2, "confidence": 100}}},
    }
    events = credit_stream()
    trials = trials_of(events)
    parts = run_spec(tmp_path, spec, events)[-1]["parts"]
    for part, label, prior, kappa in (("true_positive_rate", True, 0.2, 100), ("false_positive_rate", False, 0.5, 0)):
        subset = trials[(trials.score >= 5) == label]
        counts = subset.groupby("group").approved.agg(["sum", "count"])
        assert (parts[part]["prior"], parts[part]["confidence"]) == (prior, kappa)
        for group in ("a", "b"):
            expected = (counts.loc[group, "sum"] + prior * kappa) / (counts.loc[group, "count"] + kappa)
            assert parts[part]["groups"][group]["estimate"] == pytest.approx(expected, rel=1e-12), (part, group)


def test_an_unknown_part_is_named_with_the_metrics_parts():
    spec = {**SPEC, "estimator": {"prior": 0.5, "parts": {"true_positive_rate": {"confidence": 5}}}}
    with pytest.raises(SpecError, match=r"estimator -> parts -> true_positive_rate: demographic_parity has no part 'true_positive_rate'; its parts: selection_rate"):
        build_plan(parse_spec(spec))


def test_a_composite_key_names_distinct_fields():
    spec = {**SPEC, "input": {**SPEC["input"], "key": ["applicant_id", "applicant_id"]}}
    with pytest.raises(SpecError, match=r"a composite key names one or more distinct fields"):
        parse_spec(spec)


def delayed_decisions(seed: int = 8, applicants: int = 900) -> list[dict]:
    """Applications over 200 days, each decided 0–120 days later: late labels, as in a credit pipeline."""
    rng = random.Random(seed)
    events = []
    for index in range(applicants):
        opened = rng.randrange(0, 200 * 86400)
        group = rng.choice(["a", "b"])
        approved = rng.random() < (0.6 if group == "a" else 0.4 + 0.3 * opened / (200 * 86400))  # b drifts upwards
        events.append({"event": "APPLY", "applicant_id": f"A{index}", "branch": "north", "minute": opened, "group": group, "score": 5})
        events.append({"event": "DECISION", "applicant_id": f"A{index}", "branch": "north", "minute": opened + rng.randrange(0, 120 * 86400), "approved": approved})
    return sorted(events, key=lambda event: event["minute"])


def delayed_trials(events: list[dict]) -> pd.DataFrame:
    """One row per application: when it opened and closed (seconds), its group and the decision."""
    frame = pd.DataFrame(events)
    applications = frame[frame.event == "APPLY"][["applicant_id", "minute", "group"]].rename(columns={"minute": "opened"})
    decisions = frame[frame.event == "DECISION"][["applicant_id", "minute", "approved"]].rename(columns={"minute": "closed"})
    return applications.merge(decisions, on="applicant_id")


@pytest.mark.parametrize("kind", ["sliding", "periodic"])
def test_windows_by_opened_time_count_the_decisions_of_their_span(tmp_path, kind):
    """Against pandas: at each daily evaluation, the trials opened within the window's span and closed by then."""
    spec = {**SPEC, "trial": {"opens_on": ["APPLY"], "close_on": ["DECISION"], "close_after": "200d"}, "evaluate": {"every": "1d"},
            "window": {"kind": kind, "length": "30d", "by": "opened"}, "publish": {"min_cell": 1}}  # fmt: skip
    events = delayed_decisions()
    trials = delayed_trials(events)
    estimates = run_spec(tmp_path, spec, events)
    length, checked = 30 * 86400, 0
    for record in estimates[::7]:
        tick = int(pd.Timestamp(record["event_time"]).timestamp())
        start = tick - length if kind == "sliding" else (tick - tick % length if tick % length else tick - length)
        covered = trials[(trials.opened > start) & (trials.opened <= tick) & (trials.closed <= tick)]
        counts = covered.groupby("group").approved.agg(["sum", "count"])
        expected = {group: [int(row["sum"]), int(row["count"])] for group, row in counts.iterrows()}
        got = {g: [c["hits"], c["trials"]] for g, c in record["parts"].get("selection_rate", {"groups": {}})["groups"].items()}
        assert got == expected, record["event_time"]
        checked += bool(expected)
    assert checked > 10


def test_the_time_between_two_events_is_a_value(tmp_path):
    """`elapsed: d` takes the days from the trial's opening to the decision: its mean per group (delayed impact) and the
    rate of decisions within 7 days (demographic parity of `days <= 7`), against pandas."""
    events = delayed_decisions()
    trials = delayed_trials(events)
    trials["days"] = (trials.closed - trials.opened) / 86400
    variables = {**SPEC["variables"], "days": {"first": "DECISION", "elapsed": "d"}, "quick": {"expr": "days <= 7"}}
    trial = {"opens_on": ["APPLY"], "close_on": ["DECISION"], "close_after": "200d"}
    mean_spec = {**SPEC, "trial": trial, "variables": variables, "metric": {"type": "delayed_impact", "group": "group", "outcome": "days", "threshold": 0.5}}
    cells = run_spec(tmp_path / "mean", mean_spec, events)[-1]["parts"]["mean_outcome"]["groups"]
    for group, days in trials.groupby("group").days.mean().items():
        assert cells[group]["estimate"] == pytest.approx(days, rel=1e-12)
    rate_spec = {**SPEC, "trial": trial, "variables": variables, "metric": {"type": "demographic_parity", "group": "group", "prediction": "quick", "threshold": 0.1}}
    cells = run_spec(tmp_path / "rate", rate_spec, events)[-1]["parts"]["selection_rate"]["groups"]
    for group, quick in (trials.days <= 7).groupby(trials.group).agg(["sum", "count"]).iterrows():
        assert (cells[group]["hits"], cells[group]["trials"]) == (quick["sum"], quick["count"])


def test_elapsed_is_for_first_and_last_variables():
    spec = {**SPEC, "variables": {**SPEC["variables"], "days": {"exists": "DECISION", "elapsed": "d"}}}
    with pytest.raises(SpecError, match=r"an exists variable takes within and where, not field, expr or elapsed"):
        parse_spec(spec)


def account_stream(seed: int = 4, accounts: int = 300) -> list[dict]:
    """Per account: an opening, contacts, payments and scores over a year, then a review that closes the trial."""
    rng = random.Random(seed)
    events = []
    for index in range(accounts):
        start = rng.randrange(0, 100 * 86400)
        key, group = f"C{index}", rng.choice(["a", "b"])
        events.append({"event": "OPEN", "applicant_id": key, "branch": "north", "minute": start, "group": group})
        for _ in range(rng.randrange(0, 6)):
            events.append({"event": "CONTACT", "applicant_id": key, "branch": "north", "minute": start + rng.randrange(1, 90 * 86400), "channel": rng.choice(["phone", "mail"])})
        for _ in range(rng.randrange(0, 8)):
            events.append({"event": "PAYMENT", "applicant_id": key, "branch": "north", "minute": start + rng.randrange(1, 400 * 86400), "amount": round(rng.uniform(5, 500), 2)})
        for _ in range(rng.randrange(0, 4)):
            events.append({"event": "SCORE", "applicant_id": key, "branch": "north", "minute": start + rng.randrange(1, 400 * 86400), "value": rng.randint(300, 850)})
        events.append({"event": "REVIEW", "applicant_id": key, "branch": "north", "minute": start + 420 * 86400})
    return sorted(events, key=lambda event: (event["minute"], event["event"] != "OPEN"))


ACCOUNTS = {
    **SPEC,
    "input": {
        "time": "minute", "time_format": "epoch_s", "key": "applicant_id", "kind": "event",
        "kinds": {"OPEN": {"group": "str"}, "CONTACT": {"channel": "str"}, "PAYMENT": {"amount": "float"}, "SCORE": {"value": "int"}, "REVIEW": {}},
    },
    "trial": {"opens_on": ["OPEN"], "close_on": ["REVIEW"]},
    "variables": {
        "group": {"first": "OPEN", "field": "group"},
        "n_contacts": {"count": "CONTACT", "within": "30d"},
        "phone_calls": {"count": "CONTACT", "where": "channel == 'phone'"},
        "total_paid": {"sum": "PAYMENT.amount", "within": "365d"},
        "max_score": {"max": "SCORE", "field": "value"},
        "min_score": {"min": "SCORE.value"},
        "contacted": {"expr": "n_contacts >= 1"},
    },
    "publish": {"min_cell": 1},
}  # fmt: skip


@pytest.mark.parametrize(
    ("outcome", "reference"),
    [
        ("n_contacts", lambda events, opened: events.query("event == 'CONTACT' and minute - opened <= 30 * 86400").groupby("applicant_id").size()),
        ("phone_calls", lambda events, opened: events.query("event == 'CONTACT' and channel == 'phone'").groupby("applicant_id").size()),
        ("total_paid", lambda events, opened: events.query("event == 'PAYMENT' and minute - opened <= 365 * 86400").groupby("applicant_id").amount.sum()),
        ("max_score", lambda events, opened: events.query("event == 'SCORE'").groupby("applicant_id").value.max()),
        ("min_score", lambda events, opened: events.query("event == 'SCORE'").groupby("applicant_id").value.min()),
    ],
)
def test_counts_sums_and_extremes_over_a_trials_events(tmp_path, outcome, reference):
    """The mean per group of each fold over the accounts that have a value, against pandas (counts and sums are 0 for
    an account without such events; max and min leave it out, as undefined)."""
    events = account_stream()
    frame = pd.DataFrame(events)
    opened = frame[frame.event == "OPEN"].set_index("applicant_id")
    frame["opened"] = frame.applicant_id.map(opened.minute)
    values = reference(frame, frame.opened).reindex(opened.index)
    if outcome in ("n_contacts", "phone_calls", "total_paid"):
        values = values.fillna(0)
    expected = values.groupby(opened.group).mean()
    spec = {**ACCOUNTS, "metric": {"type": "delayed_impact", "group": "group", "outcome": outcome, "threshold": 1}}
    cells = run_spec(tmp_path, spec, events)[-1]["parts"]["mean_outcome"]["groups"]
    for group in ("a", "b"):
        assert cells[group]["estimate"] == pytest.approx(expected[group], rel=1e-9), (outcome, group)


def test_a_fold_names_what_it_reads():
    spec = {**ACCOUNTS, "variables": {**ACCOUNTS["variables"], "bad": {"sum": "PAYMENT"}}, "metric": {"type": "demographic_parity", "group": "group", "prediction": "contacted", "threshold": 0.1}}
    with pytest.raises(SpecError, match=r"a sum variable reads one value per event: sum: KIND.field, or sum: KIND with field or expr"):
        parse_spec(spec)
    spec["variables"]["bad"] = {"max": "PAYMENT.amout"}
    with pytest.raises(SpecError, match=r"variables -> bad -> max: PAYMENT events do not declare field 'amout'; declared: amount"):
        build_plan(parse_spec(spec))


def conditional_stream(seed: int = 6, applicants: int = 500) -> list[dict]:
    """Per applicant: applications (an amount of 0 is a withdrawn draft), then interim and final decisions; some
    never get a final one."""
    rng = random.Random(seed)
    events = []
    for index in range(applicants):
        key, time = f"A{index}", rng.randrange(0, 50 * 86400)
        group = rng.choice(["a", "b"])
        for amount in [0] * rng.randrange(0, 2) + [rng.choice([0, 1000, 5000])]:
            time += rng.randrange(1, 86400)
            events.append({"event": "APPLY", "applicant_id": key, "branch": "north", "minute": time, "group": group, "amount": amount})
        for _ in range(rng.randrange(1, 4)):
            time += rng.randrange(1, 25 * 86400)  # within close_after: an event past it may still join its trial (see the note in the test)
            final = rng.random() < 0.5
            events.append({"event": "DECISION", "applicant_id": key, "branch": "north", "minute": time, "approved": rng.random() < 0.5, "final": final})
            if final:
                break
    return sorted(events, key=lambda event: event["minute"])


def test_trials_open_and_close_on_conditions(tmp_path):
    """`opens_when: kind == 'APPLY' and amount > 0` and `closes_when: kind == 'DECISION' and final`, with close_after
    90d: against pandas, the trial of each applicant who made a real application, its approval the last decision up to
    the first final one (or up to 90 days). Decisions come within 90 days of the application: a trial closes by time
    when the watermark passes its close time, so an event dated after it but read before that still joins it."""
    spec = {
        **SPEC,
        "input": {**SPEC["input"], "key": "applicant_id", "kinds": {"APPLY": {"group": "str", "amount": "int"}, "DECISION": {"approved": "bool", "final": "bool"}}},
        "trial": {"opens_when": "kind == 'APPLY' and amount > 0", "closes_when": "kind == 'DECISION' and final", "close_after": "90d"},
        "variables": {"group": {"first": "APPLY", "field": "group"}, "approved": {"last": "DECISION", "field": "approved"}},
        "publish": {"min_cell": 1},
    }  # fmt: skip
    events = conditional_stream()
    frame = pd.DataFrame(events)
    opened = frame[(frame.event == "APPLY") & (frame.amount > 0)].groupby("applicant_id").agg(opened=("minute", "min"), group=("group", "first"))
    decisions = frame[frame.event == "DECISION"][["applicant_id", "minute", "approved", "final"]].join(opened, on="applicant_id", how="inner")
    decisions = decisions[(decisions.minute >= decisions.opened) & (decisions.minute <= decisions.opened + 90 * 86400)]
    finals = decisions[decisions.final.astype(bool)].groupby("applicant_id").minute.min()
    decisions = decisions[decisions.minute <= decisions.applicant_id.map(finals).fillna(float("inf"))]
    approved = decisions.sort_values("minute").groupby("applicant_id").approved.last()
    trials = opened.assign(approved=approved).dropna()
    counts = trials.groupby("group").approved.agg(["sum", "count"])
    last = run_spec(tmp_path, spec, events)[-1]
    cells = last["parts"]["selection_rate"]["groups"]
    assert {group: (cell["hits"], cell["trials"]) for group, cell in cells.items()} == {group: (int(row["sum"]), int(row["count"])) for group, row in counts.iterrows()}
    assert last["trials"]["closed"] == len(opened) and len(opened) < frame.applicant_id.nunique()


def test_a_condition_reads_fields_of_one_type():
    spec = {**SPEC, "input": {**SPEC["input"], "kinds": {"APPLY": {"group": "str", "score": "int"}, "DECISION": {"approved": "bool", "score": "str"}}},
            "trial": {"opens_when": "score > 3", "close_on": ["DECISION"]}}  # fmt: skip
    with pytest.raises(SpecError, match=r"trial -> opens_when: field 'score' has different types in different kinds \(APPLY: number, DECISION: string\); a condition needs one"):
        build_plan(parse_spec(spec))


def test_a_mean_outcomes_threshold_is_in_its_own_units_a_rates_at_most_one():
    days = {**SPEC, "variables": {**SPEC["variables"], "days": {"first": "DECISION", "elapsed": "d"}}}
    assert parse_spec({**days, "metric": {"type": "delayed_impact", "group": "group", "outcome": "days", "threshold": 3}}).metric.threshold == 3
    with pytest.raises(SpecError, match=r"metric -> threshold: Input should be less than or equal to 1 \(a gap between rates, or a ratio"):
        parse_spec({**days, "metric": {**SPEC["metric"], "threshold": 3}})
