"""Typed decoding of JSON records: msgspec structs generated from the spec's input schema, one per event kind (a tagged
union on the kind field), so that decoding and type checks are one pass in C; `RecordParser` remains the fallback.

A record the structs accept is an event whose fields are exactly what `RecordParser` would give (the record is also read
by orjson, as the parser reads it, so undeclared fields are kept and numbers have the types orjson gives them). Any
record they refuse, any time the time parser refuses, and any payload that is not JSON text goes to `RecordParser`, so
every dead letter keeps its reason and detail. A schema the structs cannot express (dotted paths, a field that is also
the key, time or kind, CSV rows whose text values are converted) is parsed by `RecordParser` alone.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import Annotated, Any

import msgspec
import orjson

from fairstream.language.fields import FieldType
from fairstream.language.stream import InputSchema
from fairstream.reading.parse import ParsedBatch, RecordParser
from fairstream.records.events import DeadLetter, Event, LineBlock, RawRecord
from fairstream.records.timefmt import MAX_TIME, MIN_TIME, time_parser

try:
    from fairstream.reading.scan import NOT_ASCII, PLAIN, scan
except ImportError:  # installed without a C compiler: every batch is parsed record by record
    scan = None

_INTEGER = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
"""Integers that orjson reads as integers too (below them it gives a float); larger ones are the fallback's to judge."""

_LONGEST_INTEGER = len(str(-(2**63)))
"""Characters of the longest integer key: a `max_key_chars` below it is checked on every key."""

_new_event = tuple.__new__
_FIRST_KEY, _TIME = operator.attrgetter("k0"), operator.attrgetter("t")


def _value_type(kind: FieldType, max_chars: int) -> Any:
    """The msgspec type of a declared field: exact types as `RecordParser` accepts them unconverted, no empty strings."""
    if kind == "str":
        return Annotated[str, msgspec.Meta(min_length=1, max_length=max_chars)]
    if kind == "int":
        return _INTEGER
    if kind == "float":
        return _INTEGER | float  # an integer stays one, as the parser keeps it
    return bool


def _time_type(time_format: str) -> Any:
    """What the time field may hold before the time parser reads it (anything else is the fallback's to judge)."""
    text = Annotated[str, msgspec.Meta(min_length=1)]
    return _INTEGER | float | text if time_format in ("epoch_s", "epoch_ms") else text


def expressible(schema: InputSchema) -> bool:
    """Whether structs can check this schema: plain field names only, no field that is also the key, time or kind, and
    no probabilities."""
    keys = [schema.key] if isinstance(schema.key, str) else list(schema.key)
    special = [*keys, schema.time, *([schema.kind] if schema.kind is not None else [])]
    declared = [name for fields in schema.kinds.values() for name in fields]
    if any(kind == "probabilities" for fields in schema.kinds.values() for kind in fields.values()):
        return False  # an object of probabilities is checked by `RecordParser`
    return not any("." in name for name in [*special, *declared]) and len(set(special)) == len(special) and not set(special) & set(declared)


def _no_fields(_struct: Any) -> tuple[()]:
    return ()


class EventColumns:
    """A block of JSON lines decoded at once, every line an event: per line its struct, key and time, in order, with no
    dict or event tuple made for it (a struct's class tells its kind: `kind_of`). `events()` gives the same events as
    `RecordParser` would, for steps that take them one by one; `fields(row)` one line's fields as the parser reads them."""

    __slots__ = ("block", "structs", "keys", "times", "kind_of", "_slots")

    def __init__(self, block: LineBlock, structs: list[Any], keys: list[str], times: list[int], kind_of: dict[type, str], slots: dict[str, dict[str, str]]):
        self.block = block
        self.structs = structs
        self.keys = keys
        self.times = times
        self.kind_of = kind_of
        self._slots = slots

    @property
    def kinds(self) -> list[str]:
        """Each event's kind."""
        kind_of = self.kind_of
        return [kind_of[typed.__class__] for typed in self.structs]

    def __len__(self) -> int:
        return len(self.structs)

    def fields(self, row: int) -> dict[str, Any]:
        """Line `row`'s fields, every one of them, as the record parser reads them."""
        return orjson.loads(self.block.lines[row])

    def reader(self, kind: str, names: tuple[str, ...]) -> Any:
        """What `operator.itemgetter(*names)` reads from an event's fields, read from the struct of an event of `kind`;
        None where a name is not a declared field of that kind."""
        slots = self._slots.get(kind, {})
        if not all(name in slots for name in names):
            return None
        return operator.attrgetter(*[slots[name] for name in names]) if names else _no_fields

    def events(self) -> list[Event]:
        """The events, each with its fields and the raw record it came from."""
        block = self.block
        return [
            _new_event(Event, (key, time, kind, orjson.loads(line), RawRecord(block.partition, offset, line)))
            for key, time, kind, line, offset in zip(self.keys, self.times, self.kinds, block.lines, block.offsets)
        ]


class TypedParser:
    """`parse(raw)` as `RecordParser.parse` gives it, decoding JSON text with structs generated from the schema."""

    def __init__(self, schema: InputSchema, fallback: RecordParser):
        self._fallback = fallback.parse
        self._keys = [schema.key] if isinstance(schema.key, str) else list(schema.key)
        self._composite = not isinstance(schema.key, str)
        self._max_key = schema.max_key_chars
        self._max_record = schema.max_record_bytes
        self._parse_time = time_parser(schema.time_format)
        key = Annotated[str, msgspec.Meta(min_length=1, max_length=schema.max_key_chars)] | _INTEGER
        common = [(f"k{index}", key) for index in range(len(self._keys))] + [("t", _time_type(schema.time_format))]
        rename = {f"k{index}": name for index, name in enumerate(self._keys)} | {"t": schema.time}
        self._kind_of: dict[type, str] = {}
        self._slots: dict[str, dict[str, str]] = {}
        structs = []
        for index, (kind, fields) in enumerate(schema.kinds.items()):
            names = {f"f{number}": name for number, name in enumerate(fields)}
            declared = [(slot, _value_type(fields[name], schema.max_value_chars)) for slot, name in names.items()]
            tagged = {"tag_field": schema.kind, "tag": kind} if schema.kind is not None else {}
            struct = msgspec.defstruct(f"Kind{index}", [*common, *declared], rename=rename | names, gc=False, **tagged)  # no cycles: untracked
            self._kind_of[struct] = kind
            self._slots[kind] = {name: slot for slot, name in names.items()}
            structs.append(struct)
        decoder = msgspec.json.Decoder(functools.reduce(operator.or_, structs))  # a tagged union of the kinds
        self._decode, self._decode_lines = decoder.decode, decoder.decode_lines
        self._lone_tag = (schema.kind, next(iter(schema.kinds))) if schema.kind is not None and len(structs) == 1 else None
        """A lone tagged struct takes a record without its tag: the kind field is then checked on the record."""
        self._general = self._composite or self._lone_tag is not None or self._max_key < _LONGEST_INTEGER
        """Whether a key needs more than the struct's checks (see `_key`): then every record is parsed on its own."""

    def parse(self, raw: RawRecord) -> Event | DeadLetter:
        events, dead, _markers = self.parse_batch([raw])
        return events[0] if events else dead[0]

    def parse_batch(self, raws: list[RawRecord]) -> ParsedBatch:
        """A source batch of one partition, in order: its events, its dead letters, and its markers (`IDLE`, `ENDED`)."""
        events: list[Event] = []
        dead: list[DeadLetter] = []
        markers: list[RawRecord] = []
        keep_event, keep_letter = events.append, dead.append
        decode, loads, parse_time, kind_of, fallback = self._decode, orjson.loads, self._parse_time, self._kind_of, self._fallback
        general, largest = self._general, self._max_record
        for raw in raws:
            if raw.offset < 0:
                markers.append(raw)
                continue
            payload = raw.payload
            try:  # a dict (a CSV row) or bytes the structs, orjson or the time parser refuse: the fallback says what it is
                if len(payload) > largest:
                    raise ValueError  # record_too_large
                typed = decode(payload)
                record = loads(payload)
                time = parse_time(typed.t)
            except Exception:
                typed = None
            if typed is not None and MIN_TIME <= time <= MAX_TIME:
                key = self._key(typed, record) if general else typed.k0 if typed.k0.__class__ is str else str(typed.k0)
                if key is not None:
                    keep_event(_new_event(Event, (key, time, kind_of[typed.__class__], record, raw)))
                    continue
            item = fallback(raw)
            if item.__class__ is Event:
                keep_event(item)
            else:
                keep_letter(item)
        return events, dead, markers

    def parse_columns(self, raws: Sequence[RawRecord]) -> tuple[EventColumns | list[Event], list[DeadLetter], list[RawRecord]]:
        """`parse_batch`, but a block of lines that are all events comes back as `EventColumns`, decoded in one call."""
        if type(raws) is LineBlock and scan is not None and not self._general:
            columns = self._columns(raws)
            if columns is not None:
                return columns, [], []
        return self.parse_batch(list(raws))

    def _columns(self, block: LineBlock) -> EventColumns | None:
        """The block decoded at once; None where a line is no event as the structs see it (or the scan cannot rule out
        that the record parser would refuse one): then each line is parsed on its own and says why."""
        text = block.text
        if len(text) > self._max_record and any(len(line) > self._max_record for line in block.lines):
            return None
        checked = scan(text)
        if checked != PLAIN:
            if checked != NOT_ASCII:
                return None
            try:
                text.decode()
            except UnicodeDecodeError:
                return None
        try:
            structs = self._decode_lines(text)
        except (msgspec.MsgspecError, RecursionError):
            return None
        if len(structs) != len(block):  # a blank line: the record parser dead-letters it
            return None
        times = block.times  # read by the file's order check, in order: its first and last are its least and greatest
        if times is None:
            try:
                times = list(map(self._parse_time, map(_TIME, structs)))
            except Exception:
                return None
            least, greatest = min(times), max(times)
        else:
            least, greatest = times[0], times[-1]
        if least < MIN_TIME or greatest > MAX_TIME:
            return None
        keys = list(map(_FIRST_KEY, structs))
        if len(set(map(type, keys))) > 1 or keys[0].__class__ is not str:  # an integer key is written as text
            keys = [key if key.__class__ is str else str(key) for key in keys]
        return EventColumns(block, structs, keys, times, self._kind_of, self._slots)

    def _key(self, typed: Any, record: dict[str, Any]) -> str | None:
        """The dependence key as `RecordParser` writes it; None where the record is the fallback's to judge (a key past
        `max_key_chars`, or a lone kind's tag missing)."""
        if self._lone_tag is not None and record.get(self._lone_tag[0]) != self._lone_tag[1]:
            return None
        if self._composite:
            key = orjson.dumps([getattr(typed, f"k{index}") for index in range(len(self._keys))]).decode()
        else:
            key = typed.k0
            if key.__class__ is str:
                return key
            key = str(key)
        return key if len(key) <= self._max_key else None


def record_parser(schema: InputSchema, fallback: RecordParser, *, strings: bool) -> RecordParser | TypedParser:
    """The fastest parser that gives what `fallback` gives: typed decoding where the schema allows it."""
    if strings or not expressible(schema):
        return fallback
    return TypedParser(schema, fallback)
