"""The documentation's file-based examples run and give what the pages say: the Python API example on COMPAS, the
full spec of the spec format page, the shield section of the shields page, the credit example and the shield
simulation whose output the shields page shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from fairstream.compiler.load import check_spec, load_plans
from fairstream.connectors.compas import compas_events
from fairstream.connectors.kafka_config import check_properties, load_connection
from fairstream.language.yaml_file import find_spec, read_yaml
from fairstream.runner import run_file
from tests.docs.markdown import ROOT, blocks, normalized
from tests.kafka.outputs import without_emitted_at

CONSOLE = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}


def page(name: str) -> str:
    return (ROOT / "docs" / name).read_text()


def fairstream(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fairstream.cli", *args], capture_output=True, text=True, cwd=cwd, env=CONSOLE, timeout=300
    )


def test_the_python_api_example_pages_every_violation_of_the_file_run(compas_csv, tmp_path):
    example = blocks(page("api.md"), "python")[0]
    events = compas_events(compas_csv)
    paged: list[dict] = []
    namespace = {
        "decision_batches": [events[start : start + 500] for start in range(0, len(events), 500)],
        "page_the_fairness_team": paged.append,
    }
    exec(compile(example, "docs/api.md", "exec"), namespace)
    alerts = without_emitted_at(run_file("compas_equalized_odds", compas_csv, tmp_path).read("alerts.jsonl"))
    assert without_emitted_at(namespace["monitor"].alerts) == alerts
    assert without_emitted_at(paged) == [alert for alert in alerts if alert["type"] == "fairness.violation"]
    assert len(paged) == 2


def test_the_dataframe_example_gives_the_file_runs_alerts(compas_csv, tmp_path):
    example = blocks(page("api.md"), "python")[1]
    (tmp_path / "compas_events.jsonl").write_text("".join(json.dumps(event) + "\n" for event in compas_events(compas_csv)))
    namespace: dict = {}
    exec(compile(example.replace('"compas_events.jsonl"', repr(str(tmp_path / "compas_events.jsonl"))), "docs/api.md", "exec"), namespace)
    alerts = run_file("compas_equalized_odds", compas_csv, tmp_path / "out").read("alerts.jsonl")
    assert namespace["result"].alerts["alert_id"].tolist() == [alert["alert_id"] for alert in alerts]
    assert set(namespace["result"].estimates.query("part == 'false_positive_rate'")["group"]) >= {"African-American", "Caucasian"}


def test_the_plain_table_example_gives_fairlearns_rates():
    """The table example on German credit: the last evaluation's rates and gap are fairlearn's MetricFrame's."""
    import pandas as pd
    from fairlearn.metrics import MetricFrame, selection_rate

    from tests.helpers import reference_file

    german = reference_file("german")
    example = blocks(page("api.md"), "python")[2]
    namespace: dict = {}
    exec(compile(example.replace('"german-credit.csv"', repr(str(german))), "docs/api.md", "exec"), namespace)
    credit = pd.read_csv(german)
    frame = MetricFrame(metrics=selection_rate, y_true=credit.classlabel21 == 1, y_pred=credit.classlabel21 == 1, sensitive_features=credit.sex9)
    final = namespace["final"].set_index("group")
    assert final.rate.to_dict() == frame.by_group.to_dict() and final.trials.sum() == len(credit)
    assert set(final.raw_gap) == {frame.difference()}


def test_the_spec_format_example_is_a_whole_valid_spec():
    example, weighted, overall, signals, table = blocks(page("spec-format.md"), "yaml")
    plan = check_spec(yaml.safe_load(example), "docs/spec-format.md")
    assert plan is not None
    [weighted_plan] = load_plans([{"monitor": "weighted", **yaml.safe_load(weighted)}])  # the weighted metric, as a table's
    assert weighted_plan.monitor.estimation.sample_weights
    [overall_plan] = load_plans([{"monitor": "overall", **yaml.safe_load(overall)}])  # the compare: overall metric, as a table's
    assert overall_plan.monitor.rule.overall
    compas = read_yaml(find_spec("compas_equalized_odds"))
    [signals_plan] = load_plans([{**compas, **yaml.safe_load(signals)}])  # the windows and triggers, on the COMPAS spec
    assert [plan.name for plan in signals_plan.monitor.counting.events] == ["screens_7d", "score_30d"]
    assert [plan.name for plan in signals_plan.monitor.triggers] == ["few-screens", "tpr-gap"]
    [table_plan] = load_plans([yaml.safe_load(table)])  # the plain table's spec: monitor and metric alone
    assert table_plan.spec.input.numbered and set(table_plan.spec.variables) == {"sex", "approved"}


def test_the_shield_sections_on_the_shields_page_are_valid_in_the_bundled_shield_specs():
    parity, opportunity, checks, answer = blocks(page("shields.md"), "yaml")
    for section, name in ((parity, "hiring_energy_shield"), (opportunity, "hiring_equal_opportunity_shield")):
        spec = read_yaml(find_spec(name))
        spec["shield"] = yaml.safe_load(section)["shield"]
        check_spec(spec, "docs/shields.md")
    for added in (checks, answer):  # the checks' level, the answer's wait: each added to a whole shield
        spec = read_yaml(find_spec("hiring_energy_shield"))
        spec["shield"] |= yaml.safe_load(added)["shield"]
        check_spec(spec, "docs/shields.md")
    assert yaml.safe_load(opportunity)["shield"].items() <= read_yaml(find_spec("hiring_equal_opportunity_shield"))["shield"].items()


def test_the_credit_example_shows_the_gaps_its_comment_names(tmp_path):
    (example,) = [block for block in blocks(page("spec-format.md"), "bash") if "synth credit" in block]
    for line in example.splitlines():
        args = line.split("#")[0].split()[1:]
        result = fairstream(*args, "--out", "out", cwd=tmp_path) if args[0] == "run" else fairstream(*args, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    first = {}
    for line in (tmp_path / "out" / "alerts.jsonl").read_text().splitlines():
        alert = json.loads(line)
        if alert["type"] == "fairness.violation":
            first.setdefault(alert["monitor"], alert)
    assert first["credit-applications.approval"]["pair"] == ["a", "b"]  # group b is approved less often
    assert first["credit-applications.days-to-decision"]["pair"] == ["b", "a"]  # and waits longer


def test_the_shield_simulation_prints_what_the_shields_page_shows(tmp_path):
    (shown,) = blocks(page("shields.md"), "console")
    command, *output = shown.splitlines()
    result = fairstream(*command.removeprefix("$ fairstream ").split(), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    printed = {normalized(line) for line in result.stdout.splitlines()}
    expected = [normalized(line) for line in output if "took" not in line]  # the synthesis time varies
    assert len(expected) >= 9
    assert [line for line in expected if line not in printed] == []


def test_the_client_properties_on_the_operations_page_are_taken_by_the_kafka_client(tmp_path):
    """librdkafka accepts every property the example sets (its CA path pointed at a real certificate authority)."""
    import trustme

    (example,) = blocks(page("tls-sasl.md"), "properties")
    authority = tmp_path / "company-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(authority))
    (tmp_path / "client.properties").write_text(example.replace("/etc/ssl/company-ca.pem", str(authority)))
    connection = load_connection(config_file=tmp_path / "client.properties", environ={"FAIRSTREAM_KAFKA_SASL_PASSWORD": "secret"})
    assert connection.bootstrap == "broker-1.example.internal:9093,broker-2.example.internal:9093"
    assert connection.properties["sasl.password"] == "secret"
    check_properties(connection)


def test_the_bias_audit_commands_write_the_report_and_verify_as_the_page_shows(compas_csv, tmp_path):
    commands, verified = blocks(page("audits.md"), "bash")[0], blocks(page("audits.md"), "console")[0]
    for line in commands.strip().splitlines():
        args = line.split()[1:]
        result = fairstream(*(str(compas_csv) if arg.endswith("compas-scores-two-years.csv") else arg for arg in args), cwd=tmp_path)
        assert result.returncode == 0, (line, result.stderr)
    assert normalized(result.stdout.strip()) == normalized(verified.strip().splitlines()[1])
    assert (tmp_path / "report.html").exists() and (tmp_path / "report_tables" / "compas-bias-audit__selection-rate__race-sex.csv").exists()
    incident = blocks(page("audits.md"), "bash")[2]  # the incident bundle of that run's violation, checked unpacked
    assert incident.startswith("fairstream incident audit --alert ")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    bundled = subprocess.run(["bash", "-euc", incident], capture_output=True, text=True, cwd=tmp_path, env={**CONSOLE, "PATH": path}, timeout=300)
    assert bundled.returncode == 0, bundled.stderr
    assert "incident bundle of alert 3c44aff4566688f5bb90a271" in bundled.stdout and "SHA256SUMS" not in bundled.stderr
