"""Alerts to a real Prometheus Alertmanager (Debian's prometheus-alertmanager, started here on loopback) and to a plain
webhook: Alertmanager lists COMPAS's violations with their identity labels and values, and notifies a violation that
recovers as firing and then resolved; a webhook receives every alert record; an Alertmanager that does not answer
costs the run a bounded wait and counted failures, never its records."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fairstream import metrics
from fairstream.cli import cli
from fairstream.connectors.broker import free_ports
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.notify import alert_annotations
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.paths import RUNBOOK_URL
from tests.helpers import wait_until
from tests.kafka.outputs import without_emitted_at

ALERTMANAGER = shutil.which("prometheus-alertmanager") or "/usr/bin/prometheus-alertmanager"


class Receiver:
    """An HTTP server on loopback that keeps every JSON body posted to it."""

    def __init__(self, port: int):
        bodies: list = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.bodies = bodies
        self.url = f"http://127.0.0.1:{port}/"
        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver(free_ports(1)[0])
    yield found
    found.close()


@pytest.fixture
def alertmanager(tmp_path: Path, receiver: Receiver) -> Iterator[str]:
    """A real Alertmanager that notifies `receiver` of every group at once (and of its resolution)."""
    if not Path(ALERTMANAGER).exists():
        pytest.skip(f"no Alertmanager here ({ALERTMANAGER}): .ci/run installs Debian's prometheus-alertmanager where apt-get runs as root")
    port = free_ports(1)[0]
    config = tmp_path / "alertmanager.yml"
    config.write_text(json.dumps({
        "route": {"receiver": "hook", "group_by": ["alertname", "monitor", "part"], "group_wait": "1s", "group_interval": "1s", "repeat_interval": "1h"},
        "receivers": [{"name": "hook", "webhook_configs": [{"url": receiver.url, "send_resolved": True}]}],
    }))  # fmt: skip
    process = subprocess.Popen(
        [ALERTMANAGER, f"--config.file={config}", f"--storage.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: urllib.request.urlopen(f"{url}/-/ready", timeout=1).status == 200, "Alertmanager to start")
        yield url
    finally:
        process.terminate()
        process.wait(10)


def run(*args: str):
    result = CliRunner().invoke(cli, ["run", *args], env={"NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    return result


def test_alertmanager_lists_compas_violations_with_their_labels_and_values(alertmanager, compas_csv, tmp_path):
    own_runbook = "https://wiki.example.org/fairness/runbook.html"
    run("compas_equalized_odds", "--input", str(compas_csv), "--out", str(tmp_path / "out"), "--alertmanager", alertmanager, "--runbook-url", own_runbook)
    written = [json.loads(line) for line in (tmp_path / "out" / "alerts.jsonl").read_text().splitlines()]
    listed = wait_until(lambda: json.loads(urllib.request.urlopen(f"{alertmanager}/api/v2/alerts").read()), "the alerts listed")
    assert sorted((alert["labels"]["part"], alert["labels"]["pair"]) for alert in listed) == sorted((a["part"], " vs ".join(a["pair"])) for a in written)
    for alert in listed:
        assert alert["labels"]["alertname"] == "FairnessViolation" and alert["labels"]["monitor"] == "compas-equalized-odds"
        assert alert["labels"]["severity"] == "warning" and alert["status"]["state"] == "active"
        record = next(a for a in written if a["part"] == alert["labels"]["part"])
        assert alert["annotations"]["alert_id"] == record["alert_id"]
        assert json.loads(alert["annotations"]["gap"]) == pytest.approx(record["gap"])
        assert alert["annotations"]["runbook_url"] == f"{own_runbook}#fairnessviolation"


def recovering_stream() -> list[dict]:
    """Hiring decisions whose gap is wide for 300 decisions (0.7 vs 0.2), then closes (0.5 vs 0.5 for 4,000)."""
    early = hiring_decisions(300, p_male=0.7, p_female=0.2, seed=3)
    late = hiring_decisions(4000, p_male=0.5, p_female=0.5, seed=4, start=datetime(2024, 1, 2))
    return [*early, *({**event, "id": f"late-{event['id']}"} for event in late)]


def test_a_violation_that_recovers_is_notified_firing_then_resolved(alertmanager, receiver, tmp_path):
    """The first 300 decisions leave the violation firing (Alertmanager notifies it once its group has waited); the
    whole stream, monitored again, ends with its recovery, which Alertmanager notifies as resolved."""
    stream = recovering_stream()
    write_jsonl(tmp_path / "early.jsonl", stream[:300])
    write_jsonl(tmp_path / "whole.jsonl", stream)

    def notified(status: str) -> bool:
        return any(body["status"] == status and body["commonLabels"].get("alertname") == "FairnessViolation" for body in receiver.bodies)

    run("hiring_demographic_parity", "--input", str(tmp_path / "early.jsonl"), "--out", str(tmp_path / "early"), "--alertmanager", alertmanager)
    wait_until(lambda: notified("firing"), "Alertmanager's firing notification")
    run("hiring_demographic_parity", "--input", str(tmp_path / "whole.jsonl"), "--out", str(tmp_path / "whole"), "--alertmanager", alertmanager)
    types = [json.loads(line)["type"] for line in (tmp_path / "whole" / "alerts.jsonl").read_text().splitlines()]
    assert types[0] == "fairness.violation" and types[-1] == "fairness.recovered"
    wait_until(lambda: notified("resolved"), "Alertmanager's resolved notification")
    resolved = next(body for body in receiver.bodies if body["status"] == "resolved")
    assert resolved["commonLabels"]["part"] == "selection_rate"
    # the first violation's cells were small and withheld, its pair's order with them: each alert is resolved as it fired
    assert {alert["labels"]["pair"] for alert in resolved["alerts"]} <= {"male vs female", "female vs male"}
    active = json.loads(urllib.request.urlopen(f"{alertmanager}/api/v2/alerts?active=true").read())
    assert [alert for alert in active if alert["labels"]["alertname"] == "FairnessViolation"] == []


def test_a_webhook_receives_every_alert_record(receiver, compas_csv, tmp_path):
    run("compas_equalized_odds", "--input", str(compas_csv), "--out", str(tmp_path / "out"), "--webhook", receiver.url)
    written = [json.loads(line) for line in (tmp_path / "out" / "alerts.jsonl").read_text().splitlines()]
    assert without_emitted_at(receiver.bodies) == without_emitted_at(written)


def test_an_alertmanager_that_does_not_answer_costs_a_bounded_wait_and_counted_failures(compas_csv, tmp_path):
    (port,) = free_ports(1)  # nothing listens there
    failed = metrics.NOTIFICATIONS_FAILED.labels("alertmanager")._value.get()
    started = time.monotonic()
    run("compas_equalized_odds", "--input", str(compas_csv), "--out", str(tmp_path / "out"), "--alertmanager", f"http://127.0.0.1:{port}")
    assert time.monotonic() - started < 30
    assert len((tmp_path / "out" / "alerts.jsonl").read_text().splitlines()) == 2  # the records are all written
    wait_until(lambda: metrics.NOTIFICATIONS_FAILED.labels("alertmanager")._value.get() > failed, "the failures to be counted", timeout=timedelta(seconds=20).total_seconds())


def test_alerts_point_to_their_section_of_the_documentations_runbook_by_default():
    record = {"monitor": "m", "part": "tpr", "pair": ["a", "b"], "alert_id": "x"}
    assert alert_annotations(record, "FairnessViolation")["runbook_url"] == "https://fairstream.readthedocs.io/en/latest/runbook.html#fairnessviolation"
    assert alert_annotations(record, "FairnessCertified", "https://w.example/r")["runbook_url"] == "https://w.example/r#fairnesscertified"
    site = yaml.safe_load((Path(__file__).parents[2] / "mkdocs.yml").read_text())
    runbook = (Path(__file__).parents[2] / "docs" / "runbook.md").read_text()
    assert RUNBOOK_URL == f"{site['site_url']}runbook.html"
    assert "## FairnessViolation" in runbook and "## FairnessCertified" in runbook


def test_a_change_fires_in_alertmanager_for_a_day_and_reaches_a_webhook(alertmanager, receiver, tmp_path):
    from fairstream.lab.changes.streams import decisions

    in_a, hired = decisions(1, 10_000, change_at=5000)
    start = datetime(2026, 1, 1)
    write_jsonl(tmp_path / "moves.jsonl", [
        {"time": (start + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ"), "id": f"D{i}", "event": "DECISION", "gender": "a" if a else "b", "hired": bool(h)}
        for i, (a, h) in enumerate(zip(in_a, hired))
    ])  # fmt: skip
    spec = tmp_path / "change.yaml"
    spec.write_text(yaml.safe_dump({
        "monitor": "hiring-change", "input": {"time": "time", "key": "id", "kind": "event", "kinds": {"DECISION": {"gender": "str", "hired": "bool"}}},
        "trial": {"close_on": ["DECISION"]}, "variables": {"group": {"first": "DECISION", "field": "gender"}, "hired": {"first": "DECISION", "field": "hired"}},
        "metric": {"type": "demographic_parity", "group": "group", "prediction": "hired", "groups": ["a", "b"], "threshold": 0.1},
        "estimator": {"verdict": "change"}, "evaluate": {"every": "1h"},
    }))  # fmt: skip
    run(str(spec), "--input", str(tmp_path / "moves.jsonl"), "--out", str(tmp_path / "out"), "--alertmanager", alertmanager, "--webhook", receiver.url)
    (change,) = [json.loads(line) for line in (tmp_path / "out" / "alerts.jsonl").read_text().splitlines() if '"fairness.changed"' in line]
    listed = wait_until(lambda: [a for a in json.loads(urllib.request.urlopen(f"{alertmanager}/api/v2/alerts").read()) if a["labels"]["alertname"] == "FairnessChanged"], "the change listed")
    (alert,) = listed
    assert alert["labels"]["changed_at"] == change["changed_at"] and alert["labels"]["severity"] == "info"
    assert alert["annotations"]["alert_id"] == change["alert_id"] and alert["annotations"]["runbook_url"].endswith("#fairnesschanged")
    ends = datetime.fromisoformat(alert["endsAt"].replace("Z", "+00:00"))
    assert timedelta(hours=23) < ends - datetime.fromisoformat(alert["startsAt"].replace("Z", "+00:00")) < timedelta(hours=25)
    wait_until(lambda: any(body.get("type") == "fairness.changed" for body in receiver.bodies), "the webhook's change record")


def test_a_merged_alarm_and_a_job_alarm_fire_in_alertmanager_naming_what_carries_them_and_reach_a_webhook(alertmanager, receiver, tmp_path):
    from tests.test_merged_alarm import job_specs, write

    specs = job_specs(tmp_path / "specs")
    data = write(tmp_path / "many.jsonl", "many", 5, 12_000)
    run(str(specs), "--input", str(data), "--out", str(tmp_path / "out"), "--alertmanager", alertmanager, "--webhook", receiver.url)
    records = [json.loads(line) for line in (tmp_path / "out" / "alerts.jsonl").read_text().splitlines()]
    (merged,) = [record for record in records if record["type"] == "fairness.violated_somewhere"]
    (job,) = [record for record in records if record["type"] == "fairness.job_violated_somewhere"]

    def listed():
        return {a["labels"]["monitor"]: a for a in json.loads(urllib.request.urlopen(f"{alertmanager}/api/v2/alerts").read()) if a["labels"]["alertname"] == "FairnessViolatedSomewhere"}

    def both():
        found = listed()
        return found if len(found) == 2 else None

    alerts = wait_until(both, "both alarms listed")
    assert alerts["hiring-a"]["annotations"]["alert_id"] == merged["alert_id"]
    assert json.loads(alerts["hiring-a"]["annotations"]["carriers"]) == [f"{c['part']} {c['pair'][0]} vs {c['pair'][1]}" for c in merged["carriers"]] != []
    assert alerts["job/hiring-a"]["annotations"]["alert_id"] == job["alert_id"]
    assert json.loads(alerts["job/hiring-a"]["annotations"]["carriers"]) == [entry["monitor"] for entry in job["monitors"]]
    assert all(alert["annotations"]["runbook_url"].endswith("#fairnessviolatedsomewhere") for alert in alerts.values())
    wait_until(lambda: {body.get("type") for body in receiver.bodies} >= {"fairness.violated_somewhere", "fairness.job_violated_somewhere"}, "the webhook's records")


def test_triggers_fire_in_alertmanager_while_raised_and_reach_a_webhook(alertmanager, receiver, compas_csv, tmp_path):
    """On COMPAS, few-screens stands raised at the end and many-open was cleared: Alertmanager lists the triggers raised
    at the end as FairnessTrigger, each with its values, and no cleared one; the webhook gets every trigger record."""
    from tests.test_event_windows import windowed_spec

    spec = windowed_spec(yaml.safe_load((Path(__file__).parents[2] / "specs" / "compas_equalized_odds.yaml").read_text()), tmp_path / "spec.yaml")
    run(str(spec), "--input", str(compas_csv), "--out", str(tmp_path / "out"), "--alertmanager", alertmanager, "--webhook", receiver.url)
    records = [json.loads(line) for line in (tmp_path / "out" / "alerts.jsonl").read_text().splitlines() if '"fairness.trigger"' in line]
    standing: dict[str, dict] = {}
    for record in records:
        standing[record["trigger"]] = record
    raised = {name for name, record in standing.items() if record["state"] == "raised"}
    assert "few-screens" in raised and standing["many-open"]["state"] == "cleared"

    def listed() -> dict[str, dict]:
        alerts = json.loads(urllib.request.urlopen(f"{alertmanager}/api/v2/alerts?active=true").read())
        return {a["labels"]["trigger"]: a for a in alerts if a["labels"]["alertname"] == "FairnessTrigger"}

    firing = wait_until(lambda: listed() if set(listed()) == raised else None, "the raised triggers listed")
    for name, alert in firing.items():
        assert alert["annotations"]["alert_id"] == standing[name]["alert_id"]
        assert json.loads(alert["annotations"]["values"]) == standing[name]["values"]
        assert alert["annotations"]["runbook_url"].endswith("#fairnesstrigger")
    wait_until(lambda: len([body for body in receiver.bodies if body.get("type") == "fairness.trigger"]) == len(records), "every trigger record at the webhook")
