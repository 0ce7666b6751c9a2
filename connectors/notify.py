"""Alerts to Prometheus Alertmanager (its v2 API) and to plain webhooks, from a background thread: the dataflow only
hands records over, waiting at most `OFFER_WAIT` seconds when the queue is full; posts are retried with backoff,
firing alerts are sent again before Alertmanager would resolve them, and failures are counted in the metrics."""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

from fairstream import metrics
from fairstream.verdicts.alerts import CERTIFIED, RECOVERED, UNCERTIFIED, VIOLATION

RUNBOOK = "docs/operations.md#alertmanager-and-webhooks"
"""Where an alert's `runbook_url` annotation points, in the documentation: what the alert means and what to do."""
RESEND_EVERY = 60.0
"""Seconds between re-sending the firing alerts (Alertmanager resolves an alert not seen for its resolve_timeout, 5 min)."""
OFFER_WAIT = 1.0
"""Longest the dataflow waits to hand a record over when the queue is full; past it the record is counted as dropped."""
QUEUE_SIZE = 10_000
BACKOFF = (0.5, 1.0, 2.0, 4.0)
"""Seconds between the tries of one post (then it counts as failed; a firing alert is tried again at the next resend)."""
FLUSH_WAIT = 5.0
"""Seconds the end of a run waits for what is still queued to be posted."""

OPENS = {VIOLATION: "FairnessViolation", CERTIFIED: "FairnessCertified"}
CLOSES = {RECOVERED: "FairnessViolation", UNCERTIFIED: "FairnessCertified"}


def _pair(record: dict[str, Any]) -> str:
    """The groups an alert names: `higher vs lower`, or a constraint's group."""
    return " vs ".join(record["pair"]) if record.get("pair") else str(record.get("group", ""))


def alert_labels(record: dict[str, Any], name: str) -> dict[str, str]:
    """The identity of an alert in Alertmanager: the same labels for a violation and its recovery.

    >>> alert_labels({"monitor": "m", "part": "tpr", "pair": ["a", "b"]}, "FairnessViolation")
    {'alertname': 'FairnessViolation', 'monitor': 'm', 'part': 'tpr', 'pair': 'a vs b', 'severity': 'warning'}
    """
    severity = "info" if name == "FairnessCertified" else "warning"
    return {"alertname": name, "monitor": str(record.get("monitor")), "part": str(record.get("part")), "pair": _pair(record), "severity": severity}


def alert_identity(record: dict[str, Any], name: str) -> tuple[str, ...]:
    """What makes a recovery the end of a violation (and an uncertification of a certification): the monitor's alert
    state is per part (and per group of a constraint), so the pair it names may differ between the two."""
    return name, str(record.get("monitor")), str(record.get("part")), str(record.get("group", ""))


def alert_annotations(record: dict[str, Any]) -> dict[str, str]:
    """What an alert says besides its identity: a summary, the values it rests on, and the runbook."""
    trials = {group: cell.get("trials") for group, cell in (record.get("groups") or {}).items()}
    return {
        "summary": f"{record.get('monitor')}: {record.get('part')} {record.get('status', '')} ({_pair(record)}) at {record.get('event_time')}",
        "gap": json.dumps(record.get("gap")),
        "raw_gap": json.dumps(record.get("raw_gap")),
        "interval": json.dumps(record.get("interval")),
        "trials": json.dumps(trials),
        "alert_id": str(record.get("alert_id")),
        "runbook_url": RUNBOOK,
    }


class Notifier:
    """Posts alert records to Alertmanager and webhooks from its own thread; see the module's docstring."""

    def __init__(self, alertmanager: str | None, webhooks: list[str], *, resend_every: float = RESEND_EVERY):
        self.alertmanager = alertmanager.rstrip("/") if alertmanager else None
        self.webhooks = list(webhooks)
        self.resend_every = resend_every
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(QUEUE_SIZE)
        self._firing: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
        self._thread = threading.Thread(target=self._run, name="fairstream-notify", daemon=True)
        self._thread.start()

    def offer(self, record: dict[str, Any]) -> None:
        """Hand over an output record (only alerts are posted); never waits longer than `OFFER_WAIT`."""
        if record.get("type") not in (*OPENS, *CLOSES):
            return
        try:
            self._queue.put(record, timeout=OFFER_WAIT)
        except queue.Full:
            metrics.NOTIFICATIONS_FAILED.labels("queue").inc()

    def close(self, wait: float = FLUSH_WAIT) -> None:
        """Post what is queued (waiting at most `wait` seconds), then stop."""
        with contextlib.suppress(queue.Full):
            self._queue.put(None, timeout=wait)
        self._thread.join(wait)

    def _run(self) -> None:
        last_sent = time.monotonic()
        while True:
            try:
                record = self._queue.get(timeout=max(0.1, self.resend_every - (time.monotonic() - last_sent)))
            except queue.Empty:
                record = {}
            if record is None:
                return
            if record:
                self._deliver(record)
            if self.alertmanager and self._firing and time.monotonic() - last_sent >= self.resend_every:
                self._post("alertmanager", f"{self.alertmanager}/api/v2/alerts", list(self._firing.values()))
                last_sent = time.monotonic()

    def _deliver(self, record: dict[str, Any]) -> None:
        for url in self.webhooks:
            self._post("webhook", url, record)
        if not self.alertmanager:
            return
        kind = record["type"]
        labels = alert_labels(record, OPENS.get(kind) or CLOSES[kind])
        identity = alert_identity(record, labels["alertname"])
        payload = {"labels": labels, "annotations": alert_annotations(record), "startsAt": record.get("emitted_at")}
        if kind in OPENS:
            self._firing[identity] = payload
        else:  # resolve the alert that fired: its pair may have been named otherwise then (another widest pair, a withheld order)
            opened = self._firing.pop(identity, None)
            payload["labels"] = (opened or payload)["labels"]
            payload["startsAt"] = (opened or payload)["startsAt"]
            payload["endsAt"] = record.get("emitted_at")
        self._post("alertmanager", f"{self.alertmanager}/api/v2/alerts", [payload])

    def _post(self, target: str, url: str, body: Any) -> bool:
        data = json.dumps(body).encode()
        for pause in (*BACKOFF, None):
            request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"}, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    if response.status < 300:
                        metrics.NOTIFICATIONS_SENT.labels(target).inc()
                        return True
            except OSError:
                pass
            if pause is None:
                break
            time.sleep(pause)
        metrics.NOTIFICATIONS_FAILED.labels(target).inc()
        return False


_active: Notifier | None = None


def offer(record: dict[str, Any]) -> None:
    """Hand a record to the notifier of this process's job, if it has one."""
    if _active is not None:
        _active.offer(record)


@contextlib.contextmanager
def notifying(alertmanager: str | None, webhooks: list[str]) -> Iterator[None]:
    """Post this process's alerts while the block runs (nothing when no target is given)."""
    global _active
    if not alertmanager and not webhooks:
        yield
        return
    _active = Notifier(alertmanager, webhooks)
    try:
        yield
    finally:
        _active.close()
        _active = None
