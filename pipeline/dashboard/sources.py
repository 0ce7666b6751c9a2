"""Where the dashboard's records come from: the files of a run's output directory, read as they grow, or the topics a
running job writes to Kafka. Each source is polled for the records that arrived since, and says in one sentence
what keeps it from being read."""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path
from typing import Any, Protocol

import orjson

from fairstream.connectors.alerts import subscribe, topic_exists
from fairstream.connectors.kafka import dead_letter_topic, estimates_topic
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.records.errors import ConnectorError

OUTPUT_FILES = ("estimates.jsonl", "alerts.jsonl", "dead_letters.jsonl")
"""The files of a run's output the dashboard reads (shield statuses are among the estimates)."""

RETRY_SECONDS = 2.0


class RecordSource(Protocol):
    def poll(self) -> tuple[list[dict[str, Any]], str | None]:
        """The records that arrived since the last poll, and what keeps the source from being read (None: nothing)."""
        ...

    def describe(self) -> str: ...


class DirectorySource:
    """A run's output directory (`fairstream run --out DIR`): each file read from where the last poll stopped, a line
    only once it is complete, so a run still writing can be followed."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self._offsets = dict.fromkeys(OUTPUT_FILES, 0)
        self._partial = dict.fromkeys(OUTPUT_FILES, b"")
        self._lines = dict.fromkeys(OUTPUT_FILES, 0)
        self._bad: dict[str, str] = {}
        """Per file, its first line that is not JSON: skipped, and said on the page for as long as the dashboard runs."""

    def describe(self) -> str:
        return str(self.directory)

    def poll(self) -> tuple[list[dict[str, Any]], str | None]:
        if not self.directory.is_dir():
            return [], f"{self.directory} is not a directory: give the --out directory of a fairstream run"
        present = [name for name in OUTPUT_FILES if (self.directory / name).is_file()]
        if not present:
            return [], f"{self.directory} is not the output of a fairstream run: it holds none of {', '.join(OUTPUT_FILES)}"
        records: list[dict[str, Any]] = []
        for name in present:
            self._read_new(name, records)
        return records, next(iter(self._bad.values()), None)

    def _read_new(self, name: str, records: list[dict[str, Any]]) -> None:
        path = self.directory / name
        with path.open("rb") as handle:
            if path.stat().st_size < self._offsets[name]:  # the file was written anew (a new run into the same directory)
                self._offsets[name], self._partial[name], self._lines[name] = 0, b"", 0
            handle.seek(self._offsets[name])
            data = self._partial[name] + handle.read()
            self._offsets[name] = handle.tell()
        lines = data.split(b"\n")
        self._partial[name] = lines.pop()  # an unfinished last line waits for the next poll
        for line in lines:
            self._lines[name] += 1
            if not line.strip():
                continue
            try:
                records.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                self._bad.setdefault(name, f"{path}, line {self._lines[name]}, is not JSON (skipped): is it a fairstream output file?")


class KafkaSource:
    """The alert, estimate and dead-letter topics of a running job, each read from its beginning and then followed in a
    thread of its own; a topic that does not exist yet is looked for again every few seconds."""

    def __init__(self, kafka: KafkaConnection, alerts_topic: str):
        self.kafka = kafka
        self.topics = (alerts_topic, estimates_topic(alerts_topic), dead_letter_topic(alerts_topic))
        self._records: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self._errors: dict[str, str | None] = dict.fromkeys(self.topics)
        self._bad: dict[str, str] = {}
        """Per topic, its first record that is not a JSON object: skipped, and said on the page for as long as the dashboard runs."""
        self._started = False

    def describe(self) -> str:
        return f"{', '.join(self.topics)} on {self.kafka.bootstrap}"

    def poll(self) -> tuple[list[dict[str, Any]], str | None]:
        if not self._started:
            self._started = True
            for topic in self.topics:
                threading.Thread(target=self._follow, args=(topic,), name=f"dashboard-{topic}", daemon=True).start()
        records = []
        while True:
            try:
                records.append(self._records.get_nowait())
            except queue.Empty:
                break
        return records, self._error()

    def _error(self) -> str | None:
        """The first topic's problem (an unreachable broker is the same sentence for all of them), else its first bad record."""
        return next((error for error in self._errors.values() if error), None) or next(iter(self._bad.values()), None)

    def _follow(self, topic: str) -> None:
        while True:
            try:
                if not topic_exists(self.kafka, topic):
                    self._errors[topic] = f"topic {topic!r} does not exist on {self.kafka.bootstrap}: is a job writing its alerts to {self.topics[0]!r}?"
                    time.sleep(RETRY_SECONDS)
                    continue
                self._errors[topic] = None
                for record in subscribe(self.kafka, topic, follow=True, distinct=False, on_bad=lambda bad: self._bad.setdefault(topic, bad)):
                    self._records.put(record)
            except ConnectorError as err:
                self._errors[topic] = str(err)
                time.sleep(RETRY_SECONDS)
