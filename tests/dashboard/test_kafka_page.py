"""`fairstream dashboard --bootstrap` in a real headless Chromium against a real broker: opened before the job exists,
it says which topic is missing, then fills in live as the job writes (groups, threshold, both alerts, with the ids
of the file run); a broker that does not answer is one sentence on the page and one line on stderr."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import pandas as pd
import pytest

from fairstream.connectors.broker import free_port
from fairstream.connectors.compas import compas_events
from fairstream.connectors.replay import replay
from fairstream.runner import run_file
from tests.conftest import SPECS
from tests.dashboard.browser import alert_ids, dashboard, new_browser, page_error, texts, wait_for

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def browser():
    driver = new_browser()
    yield driver
    driver.quit()


def test_the_page_of_a_live_kafka_job_fills_in_as_the_job_writes(browser, kafka_bootstrap, topic, compas_csv, tmp_path):
    alerts = f"{topic}-alerts"
    with dashboard("--bootstrap", kafka_bootstrap, "--alerts", alerts) as served:
        browser.get(served.url)
        missing = wait_for(browser, page_error, what="the missing topic")
        assert missing.startswith(f"topic '{alerts}' does not exist on {kafka_bootstrap}")
        replay(compas_events(compas_csv), kafka_bootstrap, topic, partitions=2)
        job = subprocess.run(
            [sys.executable, "-m", "fairstream.cli", "run", str(SPECS / "compas_equalized_odds.yaml"), "--bootstrap", kafka_bootstrap,
             "--topic", topic, "--alerts", alerts, "--until-end"],
            capture_output=True, text=True, timeout=240,
        )  # fmt: skip
        assert job.returncode == 0, job.stderr
        file_run = run_file(SPECS / "compas_equalized_odds.yaml", compas_csv, tmp_path / "file")
        file_alerts = file_run.read("alerts.jsonl")
        wait_for(browser, lambda b: len(alert_ids(b)) == len(file_alerts) and not page_error(b), timeout=60, what="the job's alerts")
        assert sorted(alert_ids(browser)) == sorted(alert["alert_id"] for alert in file_alerts) and len(file_alerts) == 2
        shown = {entry.split(" (n=")[0] for entry in texts(browser, ".legendtext")}
        assert set(pd.read_csv(compas_csv, usecols=["race"]).race) | {"threshold"} <= shown
        snapshot = json.loads(urllib.request.urlopen(served.url + "api/snapshot").read())
        assert snapshot["monitors"][0]["evaluations"] == len(file_run.read("estimates.jsonl"))


def test_a_broker_that_does_not_answer_is_one_sentence_on_the_page_and_on_stderr(browser):
    nobody = f"127.0.0.1:{free_port()}"
    with dashboard("--bootstrap", nobody, "--alerts", "fairness-alerts") as served:
        browser.get(served.url)
        message = wait_for(browser, page_error, timeout=60, what="the unreachable broker")
        assert message.startswith(f"cannot reach Kafka at {nobody}: ")
        stderr = served.stderr()
    assert stderr == f"error: {message}\n"
