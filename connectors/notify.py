"""Alerts to Prometheus Alertmanager (its v2 API) and to plain webhooks, each endpoint from a thread of its own: the
dataflow only hands records over; a slow or dead endpoint holds up no other and no record. Posts are retried with
backoff while an endpoint answers and tried once while it fails; each endpoint that starts failing is named in one
line. Firing alerts are sent again before Alertmanager would resolve them. What an endpoint never accepted (a failed
webhook post, an alert the queue could not take, what is left when the run ends) is written down as a
`pipeline.undelivered` record and counted."""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fairstream import metrics
from fairstream.paths import RUNBOOK_URL
from fairstream.records import wire
from fairstream.records.envelope import (
    CERTIFIED,
    CHANGED,
    JOB_MERGED,
    MERGED,
    NOTICES,
    RECOVERED,
    TRIGGER,
    UNCERTIFIED,
    UNDELIVERED,
    VIOLATION,
)

RESEND_EVERY = 60.0
"""Seconds between re-sending the firing alerts (Alertmanager resolves an alert not seen for its resolve_timeout, 5 min)."""
QUEUE_SIZE = 10_000
"""Alerts an endpoint's queue holds; one more is undelivered at once (the dataflow never waits for an endpoint)."""
BACKOFF = (0.5, 1.0, 2.0, 4.0)
"""Seconds between the tries of one post while the endpoint answers (a failing endpoint gets one try a post)."""
REQUEST_TIMEOUT = 5.0
"""Seconds one request may take."""
FLUSH_WAIT = 5.0
"""Seconds the end of a run waits for what is still queued to be posted; the rest is undelivered."""
UNDELIVERED_FILE = "undelivered.jsonl"
"""Beside a file run's outputs: the alerts a notification endpoint never accepted."""

CHANGE_FIRES = 86_400.0
"""Seconds a `FairnessChanged` alert fires: a change is an event, so its alert resolves itself after a day."""
OPENS = {VIOLATION: "FairnessViolation", CERTIFIED: "FairnessCertified"}
CLOSES = {RECOVERED: "FairnessViolation", UNCERTIFIED: "FairnessCertified"}
log = logging.getLogger("fairstream.notify")

Undelivered = Callable[[list[dict[str, Any]]], None]
"""Where `pipeline.undelivered` records go: a file beside the outputs, or the dead-letter topic."""


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


def alert_annotations(record: dict[str, Any], name: str, runbook: str = RUNBOOK_URL) -> dict[str, str]:
    """What alert `name` says besides its identity: a summary, the values it rests on, and its section of the runbook."""
    trials = {group: cell.get("trials") for group, cell in (record.get("groups") or {}).items()}
    return {
        "summary": f"{record.get('monitor')}: {record.get('part')} {record.get('status', '')} ({_pair(record)}) at {record.get('event_time')}",
        "gap": json.dumps(record.get("gap")),
        "raw_gap": json.dumps(record.get("raw_gap")),
        "interval": json.dumps(record.get("interval")),
        "trials": json.dumps(trials),
        "alert_id": str(record.get("alert_id")),
        "runbook_url": f"{runbook}#{name.lower()}",
    }


def shown_url(url: str) -> str:
    """An endpoint as logs and records name it: scheme, host and port, never credentials or a path (a webhook's path
    often is its secret).

    >>> shown_url("https://user:token@hooks.example.com:8443/services/T0/B0/secret?x=1")
    'https://hooks.example.com:8443/…'
    """
    parts = urlsplit(url)
    host = parts.hostname or "?"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{'/…' if parts.path.strip('/') or parts.query else '/'}"


def undelivered_record(target: str, url: str, reason: str, record: dict[str, Any]) -> dict[str, Any]:
    """What is written down for an alert an endpoint never accepted."""
    return wire.check({"type": UNDELIVERED, "alert_id": record.get("alert_id"), "target": target, "endpoint": shown_url(url), "reason": reason, "record": record})


class _Endpoint:
    """One endpoint's queue, drained by its own thread; posts are retried with backoff while it answers, tried once
    while it fails. Subclasses say what a batch of alert records becomes (`_deliver`) and what is left at the end."""

    target = ""

    def __init__(self, url: str, undelivered: Undelivered):
        self.url = url
        self._undelivered = undelivered
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(QUEUE_SIZE)
        self._lock = threading.Lock()  # what is still to be delivered, read by `leftovers` from another thread
        self._in_flight: list[dict[str, Any]] = []
        self._failing: str | None = None
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"fairstream-notify-{self.target}", daemon=True)
        self._thread.start()

    def offer(self, record: dict[str, Any]) -> None:
        try:
            self._queue.put_nowait(record)
        except queue.Full:
            self._give_up([record], f"its queue held {QUEUE_SIZE:,} alerts the endpoint had not taken")

    def stop(self) -> None:
        self._closing.set()
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(None)

    def join(self, wait: float) -> None:
        self._thread.join(wait)

    def leftovers(self) -> list[dict[str, Any]]:
        """The alerts not delivered when the run ended, as `pipeline.undelivered` records."""
        why = f"not accepted when the run ended{f' ({self._failing})' if self._failing else ''}"
        with self._lock:
            left = [*self._in_flight, *self._pending()]
            self._in_flight = []
            self._clear()
        while True:
            try:
                record = self._queue.get_nowait()
            except queue.Empty:
                break
            if record is not None:
                left.append(record)
        return [undelivered_record(self.target, self.url, why, record) for record in left]

    def _run(self) -> None:
        while True:
            try:
                record = self._queue.get(timeout=self._wait())
            except queue.Empty:
                record = {}
            if record is None:
                return
            batch = [record] if record else []
            while batch and len(batch) < 500:  # take what else is queued, so a slow endpoint does not fall behind
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self._queue.put(None)  # handled once this batch is delivered
                    break
                batch.append(more)
            with self._lock:
                self._in_flight = list(batch)
            try:
                self._deliver(batch)
            except Exception as err:  # nothing an endpoint answers may end the thread: what it held is written down
                log.exception("notifications to %s %s failed", self.target, shown_url(self.url))
                with self._lock:
                    held, self._in_flight = self._in_flight, []
                self._give_up(held, f"{type(err).__name__}: {err}")

    def _done(self, record: dict[str, Any]) -> None:
        """A record of the batch in hand is delivered, given up, or kept elsewhere: no longer in flight."""
        with self._lock:
            self._in_flight = [held for held in self._in_flight if held is not record]

    def _post(self, body: Any) -> bool:
        """Post one body (retried with backoff while the endpoint answers); whether the endpoint accepted it."""
        data = json.dumps(body).encode()
        pauses = () if self._failing or self._closing.is_set() else BACKOFF
        for pause in (*pauses, None):
            reason = self._try(data)
            if reason is None:
                metrics.notification_sent(self.target)
                if self._failing:
                    log.info("notifications to %s %s are accepted again", self.target, shown_url(self.url))
                self._failing = None
                return True
            if pause is None or self._closing.wait(pause):
                break
        metrics.notification_failed(self.target)
        if self._failing is None:
            log.warning(
                "notifications to %s %s fail: %s; until it answers each post is tried once, and an alert it never accepts is written down (%s)",
                self.target, shown_url(self.url), reason, UNDELIVERED,
            )  # fmt: skip
        self._failing = reason
        return False

    def _try(self, data: bytes) -> str | None:
        """One request: None when the endpoint accepted it, else why not (any answer, HTTP or not, is survived)."""
        request = urllib.request.Request(self.url, data=data, headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as response:
                return None if response.status < 300 else f"HTTP {response.status}"
        except urllib.error.HTTPError as err:
            return f"HTTP {err.code}"
        except urllib.error.URLError as err:
            return str(err.reason)
        except TimeoutError:
            return f"no answer within {REQUEST_TIMEOUT:g} s"
        except Exception as err:  # a garbled answer (http.client.BadStatusLine …), a reset connection: a failed post
            text = " ".join(str(err).split())[:120]  # what the endpoint sent, on one line and short
            return f"{type(err).__name__}: {text}" if text else type(err).__name__

    def _give_up(self, records: list[dict[str, Any]], reason: str) -> None:
        metrics.notification_undelivered(self.target, len(records))
        self._undelivered([undelivered_record(self.target, self.url, reason, record) for record in records])

    def _wait(self) -> float:
        return 3600.0

    def _deliver(self, batch: list[dict[str, Any]]) -> None:
        raise NotImplementedError

    def _note_merged(self, record: dict[str, Any]) -> None:
        """The merged evidence over a monitor's pairs reached 1/α: it fires and stands, as a betting test's rejection does."""
        labels = {"alertname": "FairnessViolatedSomewhere", "monitor": str(record.get("monitor")), "severity": "warning"}
        carriers = [f"{c['part']} {c['pair'][0]} vs {c['pair'][1]}" for c in record.get("carriers") or []] or [
            entry["monitor"] for entry in record.get("monitors") or []
        ]
        annotations = {
            "summary": (
                f"{record.get('monitor')}: some pair violates {record.get('metric')} (evidence merged over {record.get('pairs_tested')} pairs, α = {record.get('alpha')})"
                if "job" not in record
                else f"{record['job']}: some monitor's property is violated (evidence merged over {len(carriers)} monitors, α = {record.get('alpha')})"
            ),
            "carriers": json.dumps(carriers),
            "log_evidence": json.dumps(record.get("log_evidence")),
            "alert_id": str(record.get("alert_id")),
            "runbook_url": f"{self.runbook}#fairnessviolatedsomewhere",
        }
        self._unsent[tuple(sorted(labels.items()))] = ({"labels": labels, "annotations": annotations, "startsAt": record.get("emitted_at")}, record)

    def _note_trigger(self, record: dict[str, Any]) -> None:
        """A raised trigger fires until its clearing resolves it: one alert per monitor and trigger."""
        labels = {"alertname": "FairnessTrigger", "monitor": str(record.get("monitor")), "trigger": str(record.get("trigger")), "severity": "warning"}
        identity = ("FairnessTrigger", labels["monitor"], labels["trigger"])
        annotations = {
            "summary": f"{record.get('monitor')}: trigger {record.get('trigger')} {record.get('state')} at {record.get('event_time')}: {record.get('when')}",
            "message": str(record.get("message", "")),
            "values": json.dumps(record.get("values")),
            "alert_id": str(record.get("alert_id")),
            "runbook_url": f"{self.runbook}#fairnesstrigger",
        }
        payload = {"labels": labels, "annotations": annotations, "startsAt": record.get("emitted_at")}
        if record.get("state") == "raised":
            self._firing[identity] = (payload, record)
        else:
            opened = self._firing.pop(identity, None)
            if opened is not None:
                payload["startsAt"] = opened[0]["startsAt"]
            payload["endsAt"] = record.get("emitted_at")
        self._unsent[tuple(sorted(labels.items()))] = (payload, record)

    def _pending(self) -> list[dict[str, Any]]:
        return []

    def _clear(self) -> None:
        pass


class _Webhook(_Endpoint):
    """Every alert record posted as it is, one post each; one that fails is undelivered."""

    target = "webhook"

    def _deliver(self, batch: list[dict[str, Any]]) -> None:
        for record in batch:
            if not self._post(record):
                self._give_up([record], self._failing or "refused")
            self._done(record)


class _Alertmanager(_Endpoint):
    """Alerts posted to Alertmanager's v2 API, what is queued in one post; the firing ones sent again every
    `resend_every` seconds. A post that fails leaves its alerts unsent, for the next post."""

    target = "alertmanager"

    def __init__(self, url: str, undelivered: Undelivered, resend_every: float, runbook: str):
        self.resend_every = resend_every
        self.runbook = runbook
        self._firing: dict[tuple[str, ...], tuple[dict[str, Any], dict[str, Any]]] = {}
        self._unsent: dict[tuple[tuple[str, str], ...], tuple[dict[str, Any], dict[str, Any]]] = {}  # by labels: not yet accepted
        self._last_resend = time.monotonic()
        super().__init__(url, undelivered)

    def _wait(self) -> float:
        return max(0.1, self.resend_every - (time.monotonic() - self._last_resend))

    def _deliver(self, batch: list[dict[str, Any]]) -> None:
        resend = time.monotonic() - self._last_resend >= self.resend_every
        with self._lock:
            for record in batch:
                self._note(record)
            self._in_flight = []  # each is unsent now, until a post carries it
            firing = {tuple(sorted(payload["labels"].items())): (payload, record) for payload, record in self._firing.values()}
            sending = {**firing, **self._unsent} if resend else dict(self._unsent)
        if resend:
            self._last_resend = time.monotonic()
        if sending and self._post([payload for payload, _record in sending.values()]):
            with self._lock:
                for identity, alert in sending.items():
                    if self._unsent.get(identity) is alert:
                        del self._unsent[identity]

    def _note(self, record: dict[str, Any]) -> None:
        """A firing alert becomes firing; an ending one resolves the alert that fired (its pair may have been named
        otherwise then: another widest pair, a withheld order). What is unsent is kept per label set, Alertmanager's
        identity of an alert: the latest state of each is posted."""
        kind = record["type"]
        if kind == CHANGED:
            self._note_change(record)
            return
        if kind in (MERGED, JOB_MERGED):
            self._note_merged(record)
            return
        if kind == TRIGGER:
            self._note_trigger(record)
            return
        labels = alert_labels(record, OPENS.get(kind) or CLOSES[kind])
        identity = alert_identity(record, labels["alertname"])
        payload = {"labels": labels, "annotations": alert_annotations(record, labels["alertname"], self.runbook), "startsAt": record.get("emitted_at")}
        if kind in OPENS:
            self._firing[identity] = (payload, record)
        else:
            opened = self._firing.pop(identity, None)
            if opened is not None:
                payload["labels"], payload["startsAt"] = opened[0]["labels"], opened[0]["startsAt"]
            payload["endsAt"] = record.get("emitted_at")
        self._unsent[tuple(sorted(payload["labels"].items()))] = (payload, record)

    def _note_change(self, record: dict[str, Any]) -> None:
        """A change fires once, for `CHANGE_FIRES` seconds from when it was written; each change point is its own alert."""
        labels = {**alert_labels(record, "FairnessChanged"), "severity": "info", "changed_at": str(record.get("changed_at"))}
        start = record.get("emitted_at")
        ends = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + CHANGE_FIRES))
        annotations = {
            "summary": f"{record.get('monitor')}: {record.get('part')} {_pair(record)} moved {record.get('direction')} at {record.get('changed_at')}",
            "gap_before": json.dumps(record.get("gap_before")),
            "gap_after": json.dumps(record.get("gap_after")),
            "alert_id": str(record.get("alert_id")),
            "runbook_url": f"{self.runbook}#fairnesschanged",
        }
        self._unsent[tuple(sorted(labels.items()))] = ({"labels": labels, "annotations": annotations, "startsAt": start, "endsAt": ends}, record)

    def _pending(self) -> list[dict[str, Any]]:
        return [record for _payload, record in self._unsent.values()]

    def _clear(self) -> None:
        self._unsent.clear()


class UndeliveredFile:
    """`pipeline.undelivered` records appended to a JSON-lines file beside the run's outputs (created on the first)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()

    def __call__(self, records: list[dict[str, Any]]) -> None:
        with self._lock, self.path.open("ab") as handle:
            handle.write(b"".join(wire.encode(record) + b"\n" for record in records))


class Notifier:
    """Posts alert records to Alertmanager and webhooks; see the module's docstring."""

    def __init__(
        self, alertmanager: str | None, webhooks: list[str], undelivered: Undelivered, *, resend_every: float = RESEND_EVERY, runbook: str = RUNBOOK_URL
    ):
        self._undelivered = undelivered
        self.endpoints: list[_Endpoint] = [_Webhook(url, undelivered) for url in webhooks]
        if alertmanager:
            self.endpoints.append(_Alertmanager(f"{alertmanager.rstrip('/')}/api/v2/alerts", undelivered, resend_every, runbook))

    def offer(self, record: dict[str, Any]) -> None:
        """Hand over an output record (only alerts are posted); never waits."""
        if record.get("type") in (*OPENS, *CLOSES, *NOTICES):
            for endpoint in self.endpoints:
                endpoint.offer(record)

    def close(self, wait: float = FLUSH_WAIT) -> None:
        """Post what is queued (waiting at most `wait` seconds), then write down and count what is left."""
        deadline = time.monotonic() + wait
        for endpoint in self.endpoints:
            endpoint.stop()
        for endpoint in self.endpoints:
            endpoint.join(max(0.0, deadline - time.monotonic()))
        for endpoint in self.endpoints:
            left = endpoint.leftovers()
            if left:
                metrics.notification_undelivered(endpoint.target, len(left))
                self._undelivered(left)


_active: Notifier | None = None


def offer(record: dict[str, Any]) -> None:
    """Hand a record to the notifier of this process's job, if it has one."""
    if _active is not None:
        _active.offer(record)


@contextlib.contextmanager
def notifying(
    alertmanager: str | None, webhooks: list[str], undelivered: Callable[[], Undelivered], place: str, runbook: str = RUNBOOK_URL
) -> Iterator[None]:
    """Post this process's alerts while the block runs (nothing when no target is given); `undelivered` makes the
    writer of what is never accepted, which the summary names as `place`; alerts point to sections of `runbook`."""
    global _active
    if not alertmanager and not webhooks:
        yield
        return
    _active = Notifier(alertmanager, webhooks, undelivered(), runbook=runbook)
    metrics.notifying(place)
    try:
        yield
    finally:
        _active.close()
        _active = None
