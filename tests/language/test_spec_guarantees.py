"""`fairstream spec check` says what a spec's verdicts guarantee, and warns where the spec weakens it."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

from fairstream.cli import cli
from tests.conftest import SPECS

ENV = {"NO_COLOR": "1", "COLUMNS": "400"}


def check(tmp_path, edit=None, spec="compas_equalized_odds_confident.yaml") -> list[str]:
    body = yaml.safe_load((SPECS / spec).read_text())
    if edit:
        edit(body)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(body))
    result = CliRunner().invoke(cli, ["spec", "check", str(path)], env=ENV)
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()[1:]


def test_confident_verdicts_state_their_level_family_and_interval(tmp_path):
    lines = check(tmp_path)
    assert "false alarm at one fixed look ≤ α = 0.05 over every part and pair of groups together" in lines[0]
    assert "Newcombe (Wilson) intervals of the raw counts, whatever the prior" in lines[0]
    assert any(line.startswith("  warning: confident verdicts hold at one fixed look") for line in lines)


@pytest.mark.parametrize("spec", ["compas_equalized_odds_confident.yaml", "credit_applications.yaml"])
def test_confident_specs_read_daily_name_false_alarms_and_false_certificates(tmp_path, spec):
    warnings = [line for line in check(tmp_path, spec=spec) if "one fixed look;" in line]
    assert warnings and all(
        "more false alarms than α" in warning and "more false certificates than α" in warning and "no level is claimed" in warning for warning in warnings
    )
    text = (SPECS / spec).read_text()
    assert "every: 1d" in text and "false alarms and false" in text and "certificates both exceed α" in text


@pytest.mark.parametrize(
    ("edit", "warning"),
    [
        (lambda s: s["estimator"].update(interval="beta_credible"), "beta_credible intervals hold no error rate"),
        (lambda s: s["estimator"].update(family="part"), "may raise a false alarm with probability up to k·α"),
    ],
    ids=["credible", "family-part"],
)
def test_what_weakens_a_confident_verdict_is_a_warning(tmp_path, edit, warning):
    assert any(warning in line for line in check(tmp_path, edit))


def test_anytime_verdicts_say_they_survive_label_order_and_warn_without_a_close_time(tmp_path):
    lines = check(tmp_path, spec="compas_equalized_odds_anytime.yaml")
    assert "labels may arrive late and in an order that depends on the outcome" in lines[0]
    assert not any("warning" in line for line in lines)

    def without_close_time(body):
        body["trial"] = {"opens_on": ["SCREEN"], "close_on": ["RECIDIVISM"]}

    assert any("without trial.close_after a trial that never closes holds back" in line for line in check(tmp_path, without_close_time, "compas_equalized_odds_anytime.yaml"))


def test_the_prior_weighted_interval_is_no_longer_called_beta(tmp_path):
    body = yaml.safe_load((SPECS / "compas_equalized_odds_confident.yaml").read_text())
    body["estimator"]["interval"] = "beta"
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(body))
    result = CliRunner().invoke(cli, ["spec", "check", str(path)], env=ENV)
    assert result.exit_code == 2 and "estimator -> interval" in result.output and "beta_credible" in result.output


def test_a_plain_label_from_an_event_only_some_trials_get_is_warned_of_and_a_partly_seen_one_is_not(tmp_path):
    from tests.verdicts.test_partly_seen import SPEC

    path = tmp_path / "loans.yaml"
    plain = {**SPEC, "metric": {**SPEC["metric"], "label": "repaid"}}
    for spec, warned in ((plain, True), (SPEC, False)):
        path.write_text(yaml.safe_dump(spec))
        result = CliRunner().invoke(cli, ["spec", "check", str(path)], env=ENV)
        assert result.exit_code == 0, result.output
        expected = "warning: metric.label 'repaid' comes from REPAY events, 'approved' from DECISION"
        assert (expected in result.stdout) is warned
        assert ("declare label: {variable: repaid, observed_when: <the boolean that says whose label is seen>} to bound" in result.stdout) is warned
