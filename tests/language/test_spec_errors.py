"""A bad spec fails at load with the file, the field path and the reason; every problem is reported at once."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.compiler.load import load_plan
from fairstream.records.errors import SpecError
from tests.conftest import SPECS

BASE = yaml.safe_load((SPECS / "compas_equalized_odds.yaml").read_text())


def edited(tmp_path: Path, edit) -> Path:
    spec = copy.deepcopy(BASE)
    edit(spec)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


CASES = [
    (
        lambda s: s["metric"].update(threshold=1.5),
        "metric -> threshold: Input should be less than or equal to 1 (a gap between rates, or a ratio; only delayed_impact's mean outcomes take their own units); got 1.5",
    ),
    (
        lambda s: s["metric"].update(type="disparate_impact", label=None, threshold=1.0),
        "metric.threshold 1.0 counts any difference as a violation, so no number of trials keeps a point verdict's noise inside it: "
        "give estimator.min_trials, the trials a group needs before it is judged",
    ),
    (
        lambda s: s.update(publish={"every": "100 closes"}),
        "publish.every in closes needs evaluate: {on: close}; with evaluate.every give a span of event time, like 7d",
    ),
    (
        lambda s: s["variables"]["group"].update(first="SCREENING"),
        "variables -> group -> first: unknown event kind 'SCREENING'; known kinds: RECIDIVISM, SCREEN",
    ),
    (
        lambda s: s["variables"]["group"].update(field="ethnicity"),
        "variables -> group -> field: SCREEN events do not declare field 'ethnicity'; declared: age_cat, decile_score, race, sex",
    ),
    (
        lambda s: s["variables"]["high_risk"].update(expr='decile_score > "6"'),
        'variables -> high_risk -> expr: cannot compare number with string: decile_score > "6"; compare values of the same type',
    ),
    (
        lambda s: s["trial"].update(close_after="two years"),
        "trial -> close_after: a duration is a whole number and a unit (w, d, h, m, s, ms), like 730d or 12h; got 'two years'",
    ),
    (
        lambda s: s["metric"].update(label="outcome"),
        "metric -> label: unknown variable 'outcome'; variables: group, high_risk, reoffended",
    ),
    (
        lambda s: s["metric"].update(prediction="group"),
        "metric -> prediction: must name a boolean variable; 'group' is a string",
    ),
    (
        lambda s: s["estimator"].update(kappa=3),
        "estimator -> kappa: unknown field 'kappa'; allowed: prior, confidence, verdict",
    ),
    (
        lambda s: s["variables"]["high_risk"].update(expr='__import__("os").system("ls")'),
        "variables -> high_risk -> expr: function calls are not allowed",
    ),
    (
        lambda s: s["trial"].update(close_after=None),
        "trial: a trial needs close_after, close_on or closes_when",
    ),
    (
        lambda s: s["metric"].pop("label"),
        "metric: equalized_odds needs label: the variable holding the true outcome",
    ),
    (  # values that pass a type check but cannot work: the monitor would swamp the machine or never alert
        lambda s: s.update(evaluate={"every": "1ms"}),
        "evaluate -> every: every 1ms makes 63,072,000,000 evaluations in one close_after (730d), each writing an estimate; "
        "at most evaluate.max_ticks = 1,000,000",
    ),
    (
        lambda s: s.update(evaluate={"every": "1h", "max_ticks": 100}, window={"kind": "sliding", "length": "10d"}),
        "evaluate -> every: every 1h makes 17,520 evaluations in one close_after (730d), each writing an estimate; at most evaluate.max_ticks = 100",
    ),
    (  # bounded per event as well: one event may move event time by input.max_ahead
        lambda s: s.update(evaluate={"every": "1s"}, trial={"opens_on": ["SCREEN"], "close_on": ["RECIDIVISM"]}, input={**s["input"], "max_ahead": "30d"}),
        "evaluate -> every: every 1s makes 2,592,000 evaluations in one max_ahead (30d), each writing an estimate; at most "
        "evaluate.max_ticks = 1,000,000 (one event may move event time this far)",
    ),
    (
        lambda s: s["estimator"].update(confidence=float("inf")),
        "estimator -> confidence: Input should be a finite number; got inf",
    ),
    (
        lambda s: s["metric"].update(threshold=float("nan")),
        "metric -> threshold: Input should be a finite number; got nan",
    ),
    (
        lambda s: s["trial"].update(close_after="99999999d"),
        "trial -> close_after: a duration can be at most 3652058d, the span of representable event times; got '99999999d'",
    ),
    (
        lambda s: s["input"].update(lateness=10**20),
        "input -> lateness: a duration is between 0 and 315537897599999 milliseconds; got 100000000000000000000",
    ),
    (
        lambda s: s["metric"].update(discount=0.9),
        "metric: discount weighs benefit_rate ticks; equalized_odds takes no discount",
    ),
    (
        lambda s: s.update(metric={"type": "benefit_rate", "group": "group", "supply": "x", "demand": "y", "threshold": 0.1, "discount": 0.9, "recency": 0.9}),
        "metric: give discount (ELBERT: early ticks weigh more) or recency (recent ticks weigh more), not both",
    ),
    (
        lambda s: s.update(publish={"min_cell": 0}),
        "publish -> min_cell: Input should be greater than or equal to 1; got 0",
    ),
    (  # specs that passed and then failed or misled
        lambda s: s["variables"]["reoffended"].update(within="800d"),
        "variables -> reoffended -> within: 800d is longer than trial.close_after 730d: no event after the trial closed joins it; "
        "make within at most the trial's span",
    ),
    (
        lambda s: s["estimator"].update(alpha=1e-300),
        "estimator -> alpha: alpha must be at least 1e-12: below it no stream gives the evidence, and bounds cost far more to compute",
    ),
    (
        lambda s: s["estimator"].update(prior="2 * 1"),
        "estimator -> prior: prior must be in [0, 1]; '2 * 1' is 2",
    ),
    (
        lambda s: s.update(window={"kind": "sliding", "length": "365d", "by": "opened"}),
        "window -> length: a sliding window of 365d by opened time never holds a trial that closes 730d after it opens; "
        "make it longer than trial.close_after",
    ),
]


@pytest.mark.parametrize(("edit", "message"), CASES)
def test_each_mistake_is_reported_with_file_path_and_reason(tmp_path, edit, message):
    path = edited(tmp_path, edit)
    with pytest.raises(SpecError) as caught:
        load_plan(path)
    assert str(caught.value).startswith(f"{path}: {message}")


def test_all_problems_are_reported_together(tmp_path):
    def two_mistakes(spec):
        spec["variables"]["group"]["field"] = "ethnicity"
        spec["metric"]["label"] = "outcome"

    with pytest.raises(SpecError) as caught:
        load_plan(edited(tmp_path, two_mistakes))
    assert [path for path, _ in caught.value.issues] == ["variables -> group -> field", "metric -> label"]


def test_faults_of_the_models_and_of_the_semantic_checks_are_reported_together(tmp_path):
    """Three independent faults: an unknown field and a negative κ (refused by the models) and a type error in an
    expression (found by the semantic checks, which run on the rest of the spec)."""

    def three_mistakes(spec):
        spec["metric"]["thresh"] = 0.2
        spec["estimator"]["confidence"] = -3
        spec["variables"]["high_risk"]["expr"] = "decile_score > 'six'"

    runner = CliRunner()
    path = edited(tmp_path, three_mistakes)
    result = runner.invoke(cli, ["spec", "check", str(path)], env={"NO_COLOR": "1", "COLUMNS": "300"})
    assert result.exit_code == 2
    assert [line.split(": ")[2] for line in result.output.splitlines()] == ["metric -> thresh", "estimator -> confidence", "variables -> high_risk -> expr"]
    assert "cannot compare number with string: decile_score > 'six'" in result.output


def test_a_later_phase_says_nothing_about_a_field_the_models_refused(tmp_path):
    """A refused prediction variable is taken out before the semantic checks; they must not add a second complaint about
    it (the metric's prediction then names no variable)."""

    def refused_variable(spec):
        spec["variables"]["high_risk"]["within"] = "30d"  # within belongs to exists variables: the whole variable is refused

    with pytest.raises(SpecError) as caught:
        load_plan(edited(tmp_path, refused_variable))
    assert [path for path, _ in caught.value.issues] == ["variables -> high_risk"]


def test_yaml_syntax_errors_name_the_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("monitor: x\ninput: [unclosed\n")
    with pytest.raises(SpecError, match=r"broken.yaml: line 3, column 1: invalid YAML"):
        load_plan(path)


def test_spec_check_cli_exit_codes_and_output(tmp_path):
    runner = CliRunner()
    env = {"NO_COLOR": "1", "COLUMNS": "200"}
    good = runner.invoke(cli, ["spec", "check", str(SPECS / "compas_equalized_odds.yaml")], env=env)
    assert good.exit_code == 0
    assert good.output.splitlines() == [
        f"{SPECS / 'compas_equalized_odds.yaml'}: ok (compas-equalized-odds: equalized_odds, 3 variables)",
        "  compas-equalized-odds: point verdicts: the MAP gap against ε, no error rate; groups join once they have 100 trial(s)",
    ]
    bad_path = edited(tmp_path, lambda s: s["metric"].update(threshold=0))
    bad = runner.invoke(cli, ["spec", "check", str(bad_path)], env=env)
    assert bad.exit_code == 2
    assert bad.output == f"error: {bad_path}: metric -> threshold: Input should be greater than 0; got 0\n"


def test_spec_schema_is_json_schema_of_the_models():
    import json

    result = CliRunner().invoke(cli, ["spec", "schema"])
    schema = json.loads(result.output)
    assert result.exit_code == 0 and schema["title"] == "Spec"
    assert {"monitor", "input", "trial", "variables"} <= set(schema["required"])
    assert schema["oneOf"] == [{"required": ["metric"]}, {"required": ["metrics"]}]
    assert schema["properties"]["metrics"]["items"] == {"$ref": "#/$defs/MetricEntry"} and "MetricEntry" in schema["$defs"]


def test_yaml_keys_like_on_stay_strings(tmp_path):
    path = edited(tmp_path, lambda s: s.update(evaluate={"on": "close"}))
    text = path.read_text().replace("'on'", "on")
    assert "  on: close" in text
    path.write_text(text)
    assert load_plan(path).monitor.on_close


def test_a_key_given_twice_is_refused_with_both_lines(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text((SPECS / "compas_equalized_odds.yaml").read_text() + "monitor: another-name\n")
    with pytest.raises(SpecError) as caught:
        load_plan(path)
    first = next(n for n, line in enumerate(path.read_text().splitlines(), 1) if line.startswith("monitor:"))
    assert f"invalid YAML: duplicate key 'monitor' (first at line {first})" in str(caught.value)


def test_a_spec_over_a_megabyte_is_refused_before_it_is_parsed(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text((SPECS / "compas_equalized_odds.yaml").read_text() + "#" * 1_000_001 + "\n")
    with pytest.raises(SpecError) as caught:
        load_plan(path)
    assert "more than the 1,000,000 a spec may have" in str(caught.value)
