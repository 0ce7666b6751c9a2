"""Split one input file into files by dependence key, one per input partition, placed as a Kafka producer would place
the keys on a topic of that many partitions: each key's events land in one file, so the files can be monitored
side by side (`fairstream run --input 'DIR/*.jsonl'`), each read where its trials are kept."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import orjson

from fairstream.records.errors import ConnectorError
from fairstream.records.events import Unreadable
from fairstream.trials.placement import PARTITIONERS


def part_names(stem: str, partitions: int, suffix: str) -> list[str]:
    """`stem-000.jsonl` …: zero-padded, so the files' name order is their partition order (as a glob sorts them)."""
    width = max(3, len(str(partitions - 1)))
    return [f"{stem}-{partition:0{width}d}{suffix}" for partition in range(partitions)]


def split_records(
    records: Iterable[Any],
    key_of: Callable[[Any], Any],
    out_dir: str | Path,
    partitions: int,
    *,
    partitioner: str = "murmur2",
    columns: list[str] | None = None,
    header: bool = True,
) -> list[tuple[Path, int]]:
    """Write each record to the file of its key's partition: a dict as a JSON line, or as a CSV row under `columns`;
    a JSON line (bytes) as it is. Each CSV part starts with the header line unless `header` is false (a file read with
    the spec's `input.columns`).

    A record without a readable key (a line that is no JSON object, a CSV row that could not be read) goes to
    partition 0, where the monitor dead-letters it with the reason. Returns each file with the number of records
    written to it.
    """
    place = PARTITIONERS[partitioner]
    suffix = ".csv" if columns is not None else ".jsonl"
    out = Path(out_dir)
    paths = [out / name for name in part_names("part", partitions, suffix)]
    counts = [0] * partitions
    try:
        out.mkdir(parents=True, exist_ok=True)
        with ExitStack() as files:
            handles = [files.enter_context(path.open("w", newline="", encoding="utf-8", errors="surrogateescape") if columns is not None else path.open("wb")) for path in paths]
            writers = [csv.DictWriter(handle, columns) for handle in handles] if columns is not None else None
            if writers is not None and header:
                for writer in writers:
                    writer.writeheader()
            for record in records:
                fields = _fields(record)
                key = key_of(fields) if fields is not None else None
                partition = place([str(key)], partitions)[0] if isinstance(key, (str, int)) and not isinstance(key, bool) and key != "" else 0
                if isinstance(record, bytes | Unreadable):
                    handles[partition].write(_line(record, writers is not None))
                elif writers is not None:
                    writers[partition].writerow(record)
                else:
                    handles[partition].write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))
                counts[partition] += 1
    except OSError as err:
        raise ConnectorError(f"cannot write to {out}: {err.strerror}") from None
    return list(zip(paths, counts))


def _fields(record: Any) -> dict[str, Any] | None:
    """The fields a record's key is read from: a dict as it is, a JSON line parsed; None for anything else."""
    if isinstance(record, dict):
        return record
    if isinstance(record, bytes):
        try:
            parsed = orjson.loads(record)
        except orjson.JSONDecodeError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def _line(record: bytes | Unreadable, text: bool) -> Any:
    """A JSON line, or the bytes of a row its reader could not read, as written to a part: the same bytes (in a CSV
    part, as text whose bad bytes the part's encoding writes back as they were)."""
    raw = record.text if isinstance(record, Unreadable) else record
    raw = raw if raw.endswith(b"\n") else raw + b"\n"
    return raw.decode("utf-8", errors="surrogateescape") if text else raw
