"""`fairstream dashboard --bootstrap` in a real headless Chromium against a real broker: opened before the job exists,
it says which topic is missing, then fills in live as the job writes (groups, threshold, both alerts, with the ids
of the file run); a broker that does not answer is one sentence on the page and one line on stderr."""

from __future__ import annotations

import json
import re
import subprocess
import sys

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


def health(browser, table: str) -> dict[str, str]:
    """A table of the health panel: its rows' names and values as shown."""
    script = "return Object.fromEntries([...document.querySelectorAll(`[data-table='${arguments[0]}'] tr[data-key]`)].map(r => [r.dataset.key, r.cells[1].textContent]))"
    return browser.execute_script(script, table)


def test_the_page_of_a_live_kafka_job_fills_in_as_the_job_writes(browser, kafka_bootstrap, topic, compas_csv, tmp_path):
    """Opened before the job: the missing topic, then the job's groups, threshold and both alerts (the ids of the file
    run), and its health from its metrics endpoint: events read, dead letters by reason, open trials, watermark delay."""
    alerts, port = f"{topic}-alerts", free_port()
    file_run = run_file(SPECS / "compas_equalized_odds.yaml", compas_csv, tmp_path / "file")
    with dashboard("--bootstrap", kafka_bootstrap, "--alerts", alerts, "--metrics", f"http://127.0.0.1:{port}/metrics") as served:
        browser.get(served.url)
        missing = wait_for(browser, page_error, what="the missing topic")
        assert missing.startswith(f"topic '{alerts}' does not exist on {kafka_bootstrap}")
        events = compas_events(compas_csv)
        replay([*events, b"{not json", b'{"event": "SCREEN"}'], kafka_bootstrap, topic, partitions=2)
        job = subprocess.Popen(
            [sys.executable, "-m", "fairstream.cli", "run", str(SPECS / "compas_equalized_odds.yaml"), "--bootstrap", kafka_bootstrap,
             "--topic", topic, "--alerts", alerts, "--metrics-port", str(port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            file_alerts = file_run.read("alerts.jsonl")
            wait_for(browser, lambda b: len(alert_ids(b)) == len(file_alerts) and not page_error(b), timeout=90, what="the job's alerts")
            assert sorted(alert_ids(browser)) == sorted(alert["alert_id"] for alert in file_alerts) and len(file_alerts) == 2
            expected = set(pd.read_csv(compas_csv, usecols=["race"]).race) | {"threshold"}
            wait_for(browser, lambda b: expected <= {entry.split(" (n=")[0] for entry in texts(b, ".legendtext")}, timeout=60, what="groups and threshold")
            wait_for(browser, lambda b: health(b, "input").get("events read") == str(len(events) + 2), timeout=60, what="events read")
            # a dead letter is counted once written, which may come after the metrics counted it read
            wait_for(browser, lambda b: health(b, "dead letters by reason") == {"not_json": "1", "missing_field": "1"}, timeout=60, what="dead letters by reason")
            assert set(health(browser, "open trials")) == {"compas-equalized-odds"}
            # COMPAS ends in 2016: its watermark is years behind the wall clock, and the page says it in years
            delay = health(browser, "watermark behind the wall clock")["compas-equalized-odds"]
            assert delay.endswith(" years") and 5 < float(delay.split()[0]) < 100
        finally:
            job.terminate()
            job.communicate(timeout=30)


def test_a_broker_that_does_not_answer_is_one_sentence_on_the_page_and_on_stderr(browser):
    nobody = f"127.0.0.1:{free_port()}"
    with dashboard("--bootstrap", nobody, "--alerts", "fairness-alerts") as served:
        browser.get(served.url)
        message = wait_for(browser, page_error, timeout=60, what="the unreachable broker")
        assert message.startswith(f"cannot reach Kafka at {nobody}: ")
        stderr = served.stderr()
    assert stderr == f"error: {message}\n"


def test_a_record_that_is_not_json_is_skipped_and_named_on_the_page(browser, kafka_bootstrap, topic):
    from confluent_kafka import Producer

    alerts = f"{topic}-alerts"
    alert = {"alert_id": "a1", "monitor": "m", "type": "fairness.violation", "event_time": "2024-01-02T00:00:00Z", "part": "selection_rate", "pair": ["a", "b"], "gap": 0.2}
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for name, value in ((alerts, b"not json"), (alerts, json.dumps(alert).encode()), (f"{alerts}.estimates", b"[1, 2]"), (f"{alerts}.dlq", b'{"alert_id": "d1", "type": "pipeline.dead_letter", "reason": "late"}')):
        producer.produce(name, value)
    assert producer.flush(30) == 0
    with dashboard("--bootstrap", kafka_bootstrap, "--alerts", alerts) as served:
        browser.get(served.url)
        wait_for(browser, lambda b: alert_ids(b) == ["a1"] and page_error(b), what="the good alert and the bad record")
        assert re.fullmatch(rf"the record at offset 0 of '{alerts}(\.estimates)?' partition \d+ is not a JSON object: is it a fairstream topic\?", page_error(browser))
        wait_for(browser, lambda b: health(b, "dead letters by reason") == {"late": "1"}, what="the dead letter")
        served.stderr()
