"""The shipped alert rules (`deploy/prometheus/`): promtool accepts them and their unit tests pass, and a real
Prometheus evaluating them over a running job on COMPAS fires `FairnessPartViolated` for exactly the parts the job
serves as violated, with the gap it serves in the description."""

from __future__ import annotations

import shutil
import subprocess
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers import wait_until
from tests.kafka.prometheus import RULES, alerts, monitored_compas

PROMTOOL = shutil.which("promtool")


def promtool(*args: str) -> subprocess.CompletedProcess:
    if PROMTOOL is None:
        pytest.skip("no promtool here: .ci/run installs Debian's prometheus where apt-get runs as root")
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, cwd=RULES.parent, timeout=60)


def test_promtool_checks_the_rules_and_their_unit_tests_pass():
    checked = promtool("check", "rules", RULES.name)
    assert checked.returncode == 0 and "SUCCESS: 7 rules found" in checked.stdout, checked.stdout + checked.stderr
    tested = promtool("test", "rules", "fairstream.rules.test.yml")
    assert tested.returncode == 0 and "SUCCESS" in tested.stdout, tested.stdout + tested.stderr


@pytest.mark.kafka
def test_prometheus_fires_a_violation_for_each_part_the_job_serves_as_violated(kafka_bootstrap, topic, compas_csv, tmp_path):
    with monitored_compas(kafka_bootstrap, topic, compas_csv, tmp_path, rules=True) as (prometheus, metrics_port):
        served = text_string_to_metric_families(urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).read().decode())
        samples = [sample for family in served for sample in family.samples]
        violated = {(s.labels["monitor"], s.labels["part"]) for s in samples if s.name == "fairstream_verdict" and s.value == 1}
        gaps = {(s.labels["monitor"], s.labels["part"]): s.value for s in samples if s.name == "fairstream_gap"}
        assert len(violated) >= 2

        def firing() -> dict[tuple[str, str], dict]:
            found = [alert for alert in alerts(prometheus) if alert["labels"]["alertname"] == "FairnessPartViolated" and alert["state"] == "firing"]
            return {(alert["labels"]["monitor"], alert["labels"]["part"]): alert for alert in found}

        wait_until(lambda: firing().keys() == violated, "a firing FairnessPartViolated for each violated part", timeout=60)
        for (monitor, part), alert in firing().items():
            assert alert["labels"]["severity"] == "warning"
            assert alert["annotations"]["summary"] == f"{monitor}: {part} is violated"
            assert alert["annotations"]["description"].endswith(f"Gap {gaps[(monitor, part)]:.4f}.")
            assert alert["annotations"]["runbook_url"].endswith("runbook.html#fairnesspartviolated")
        others = {alert["labels"]["alertname"] for alert in alerts(prometheus)} - {"FairnessPartViolated"}
        assert others == set(), others  # a healthy job: no pipeline alert
