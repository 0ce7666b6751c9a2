"""What a run's steps report as they go, passed into the dataflow like its source and sink: records read per input
partition, open trials, and every output record (for metrics, the run's tally and notifications). The steps know
only this protocol; the runner passes the job's own, and anything else (a study, a benchmark, the Python API) the
silent one."""

from __future__ import annotations

from typing import Any, Protocol


class Telemetry(Protocol):
    def read(self, partition: int, records: int, latest_time_ms: int | None) -> None:
        """An input partition read `records` records (valid or not), its latest event time now `latest_time_ms`."""

    def open_trials(self, monitor: str, holder: int, count: int) -> None:
        """A monitor's trials open now in one input partition or trial bucket (`holder`)."""

    def observe(self, record: dict[str, Any]) -> None:
        """An output record, as it goes to the sink."""


class Silent:
    """Telemetry that reports nothing."""

    def read(self, partition: int, records: int, latest_time_ms: int | None) -> None:
        pass

    def open_trials(self, monitor: str, holder: int, count: int) -> None:
        pass

    def observe(self, record: dict[str, Any]) -> None:
        pass


SILENT = Silent()
