"""CSV text as rows, one physical line at a time (pure): a bad byte, an unbalanced quote, an overlong field or a
row with the wrong number of fields costs only its own row, an `Unreadable` with the reason, and reading goes on at
the next line. A row never shifts into the wrong columns, and an encoding mark (BOM) before the header is dropped.
"""

from __future__ import annotations

import csv
from collections import deque
from collections.abc import Iterable, Iterator

from fairstream.records.errors import InputError
from fairstream.records.events import Unreadable

FIELD_LIMIT = 131_072
"""Characters a CSV field may hold (the limit of Python's csv module): a longer field is a `value_too_long` row."""

_BOM = "\ufeff"
Line = tuple[int, bytes]
"""A physical line of the file: its number (from 1) and its bytes, line ending included."""


class CsvTable:
    """The rows of CSV text as dicts named by its header line (or by `columns` for a file without one), each row that
    cannot be read as an `Unreadable`; blank lines are skipped, as CSV readers do. An unreadable header is an
    `InputError` naming `source` (the file).

    >>> list(CsvTable([b'id,race\\n', b'1,"a\\n', b'2,b\\n']))[1]
    {'id': '2', 'race': 'b'}
    """

    def __init__(self, lines: Iterable[bytes], columns: list[str] | None = None, *, source: object = "the CSV text"):
        self._rows = _Rows(lines)
        header = columns if columns is not None else self._rows.next_row()
        if isinstance(header, Unreadable):
            raise InputError(f"{source}: the header line cannot be read: {header.detail}")
        self.header: list[str] = header or []

    def __iter__(self) -> Iterator[dict[str, str] | Unreadable]:
        header, width = self.header, len(self.header)
        while (row := self._rows.next_row(width)) is not None:
            yield row if isinstance(row, Unreadable) else dict(zip(header, row))


class _Rows:
    """Records read from physical lines; a record that fails gives its lines after the first back, to be read again."""

    def __init__(self, lines: Iterable[bytes]):
        self._lines = enumerate(lines, start=1)
        self._again: deque[Line] = deque()

    def _take(self) -> Line | None:
        return self._again.popleft() if self._again else next(self._lines, None)

    def next_row(self, width: int | None = None) -> list[str] | Unreadable | None:
        """The next record's fields (`width` of them, when given), an `Unreadable`, or None at the end."""
        while (line := self._take()) is not None:
            number, raw = line
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                return Unreadable("bad_encoding", f"line {number:,}: byte {err.start + 1:,} ({raw[err.start:err.start + 1]!r}) is not UTF-8", raw)
            if number == 1 and text.startswith(_BOM):
                text = text[1:]
            if not text.strip():
                continue
            if '"' not in text:
                return self._checked(text.rstrip("\r\n").split(","), line, width)
            return self._quoted(text, line, width)
        return None

    def _quoted(self, text: str, first: Line, width: int | None) -> list[str] | Unreadable:
        """A record with quotes, read by the csv module over as many lines as its quoted fields span."""
        taken: list[Line] = []

        def lines() -> Iterator[str]:
            yield text
            while (line := self._take()) is not None:
                try:
                    decoded = line[1].decode("utf-8")
                except UnicodeDecodeError:  # ends the record here: that line is read again, and dead-lettered on its own
                    self._again.appendleft(line)
                    return
                taken.append(line)
                yield decoded

        try:
            fields = next(csv.reader(lines(), strict=True))
        except csv.Error as err:
            self._again.extendleft(reversed(taken))
            return self._unparsed(str(err), first, taken)
        return self._checked(fields, first, width, taken)

    def _checked(self, fields: list[str], first: Line, width: int | None, taken: list[Line] | None = None) -> list[str] | Unreadable:
        """The fields of a parsed record, or why the record is unreadable (its lines after the first given back)."""
        number, raw = first
        if width is not None and len(fields) != width:
            if taken:
                self._again.extendleft(reversed(taken))
                return Unreadable("not_csv", f"line {number:,}: a quoted field runs on over {len(taken) + 1:,} lines into {len(fields):,} fields where the header has {width:,}: an unbalanced quote? reading goes on at line {number + 1:,}", raw)
            return Unreadable("not_csv", f"line {number:,}: {len(fields):,} fields where the header has {width:,}", raw)
        if len(raw) <= FIELD_LIMIT:
            return fields
        longest = max(range(len(fields)), key=lambda index: len(fields[index]))
        if len(fields[longest]) > FIELD_LIMIT:
            return Unreadable("value_too_long", f"line {number:,}: field {longest + 1:,} has {len(fields[longest]):,} characters; a CSV field holds at most {FIELD_LIMIT:,}", raw)
        return fields

    def _unparsed(self, error: str, first: Line, taken: list[Line]) -> Unreadable:
        number, raw = first
        if "field limit" in error and not taken:
            return Unreadable("value_too_long", f"line {number:,}: a field has more than {FIELD_LIMIT:,} characters, the most a CSV field holds", raw)
        if "field limit" in error or "end of data" in error:
            return Unreadable("not_csv", f"line {number:,}: a quote opened on this line is not closed (an unbalanced quote?); reading goes on at line {number + 1:,}", raw)
        return Unreadable("not_csv", f"line {number:,}: {error}", raw)
