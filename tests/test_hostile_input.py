"""Hostile input: no record can crash the parser or the clock, and one record with a lying clock changes no result.

The records are those that stopped the monitor before: an event kind that is a list or an object, times outside the
years a date can have (also after their offset), epoch numbers beyond any instant; then a fuzz of generated records
through parser and clock for an ISO and an epoch spec; then one record dated 9999-12-31, or four months ahead, among
the real COMPAS events.
"""

from __future__ import annotations

import logging

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairstream import metrics
from fairstream.compiler.load import load_plan, parse_spec
from fairstream.connectors.compas import compas_events
from fairstream.connectors.files import write_jsonl
from fairstream.reading.parse import REASONS, RecordParser
from fairstream.records.events import DeadLetter, Event, RawRecord
from fairstream.records.timefmt import DAY, HOUR, MAX_TIME, MIN_TIME
from fairstream.runner import run_file
from fairstream.trials.clock import PartitionClock
from tests.helpers import spec_dict
from tests.test_compas_reference import without_emitted_at


def parser(time_format: str = "iso") -> RecordParser:
    return RecordParser(parse_spec(spec_dict(input={"time_format": time_format})).input)


def parse(record, time_format: str = "iso"):
    payload = record if isinstance(record, bytes) else orjson.dumps(record)
    return parser(time_format).parse(RawRecord(0, 7, payload))


def screen(**changes):
    return {"event": "SCREEN", "id": "x", "date": "2015-01-01", "race": "a", "score": 3, **changes}


@pytest.mark.parametrize("kind", [["SCREEN"], {"SCREEN": 1}, 3, True, 2.5])
def test_an_event_kind_that_is_not_a_string_is_a_wrong_type(kind):
    letter = parse(screen(event=kind))
    assert isinstance(letter, DeadLetter) and letter.reason == "wrong_type" and "kind" in letter.detail


@pytest.mark.parametrize(
    "stamp",
    ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "10000-01-01", "-0001-01-01"],
)
def test_iso_times_a_date_cannot_hold_are_bad_times(stamp):
    letter = parse(screen(date=stamp))
    assert isinstance(letter, DeadLetter) and letter.reason == "bad_time"


@pytest.mark.parametrize("time_format", ["epoch_s", "epoch_ms"])
@pytest.mark.parametrize("stamp", [1e20, 9e18, -9e18, 1e300, 253402300800000, "1e400", "nan", -1e300])
def test_epoch_times_beyond_any_date_are_bad_times(time_format, stamp):
    letter = parse(screen(date=stamp), time_format)
    if time_format == "epoch_ms" and stamp == 253402300800000:
        assert letter.reason == "bad_time"  # one millisecond after 9999-12-31T23:59:59.999Z
    assert isinstance(letter, DeadLetter) and letter.reason == "bad_time", letter


def test_a_time_at_the_edge_of_the_range_is_an_event_and_a_late_one_is_written():
    first = parse(screen(date="0001-01-01T00:00:00Z"))
    assert isinstance(first, Event)
    clock = PartitionClock(0, 0)
    clock.admit([parse(screen(date="9999-12-31T23:59:59Z"))])
    accepted, letters = clock.admit([first])
    assert accepted == [] and letters[0].reason == "late" and "0001-01-01T00:00:00Z" in letters[0].detail


INTEGERS = st.integers(min_value=-(2**63), max_value=2**64 - 1)
"""What JSON numbers orjson reads as integers (larger ones are not JSON it accepts)."""

JSON = st.recursive(
    st.none() | st.booleans() | INTEGERS | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
"""Any JSON value (NaN and infinities included, which orjson writes as null)."""

TIMES = {
    "iso": st.one_of(
        st.datetimes(timezones=st.timezones()).map(lambda moment: moment.isoformat()),
        st.dates().map(str),
        st.text(max_size=30),
        JSON,
    ),
    "epoch_ms": st.one_of(INTEGERS, st.floats(allow_nan=True, allow_infinity=True), st.text(alphabet="0123456789.e-+naif", max_size=25), JSON),
}


def records(time_format: str):
    """Records near the spec's shape: each field absent, well-typed, or anything."""
    fields = {
        "event": st.one_of(st.sampled_from(["SCREEN", "RECIDIVISM", "DECIDE", "", "OTHER"]), JSON),
        "id": st.one_of(st.text(max_size=10), INTEGERS, JSON),
        "date": TIMES[time_format],
        "race": st.one_of(st.text(max_size=5), JSON),
        "score": st.one_of(INTEGERS, JSON),
        "hired": st.one_of(st.booleans(), JSON),
    }
    as_dict = st.fixed_dictionaries({}, optional=fields).map(lambda record: orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS))
    raw = st.binary(max_size=40) | JSON.map(lambda value: orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))
    return st.one_of(as_dict, as_dict, as_dict, raw)


@pytest.mark.parametrize("time_format", ["iso", "epoch_ms"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_no_generated_record_escapes_parser_and_clock_as_an_exception(time_format, data):
    """≥ 10⁴ records per format over the examples (each example a batch of up to 100): every one is an event or a dead letter with a known reason."""
    batch = data.draw(st.lists(records(time_format), min_size=60, max_size=100))
    parse_one = parser(time_format).parse
    clock = PartitionClock(0, DAY, max_future=HOUR, max_ahead=30 * DAY)
    items = [parse_one(RawRecord(0, offset, payload)) for offset, payload in enumerate(batch)]
    events = [item for item in items if isinstance(item, Event)]
    dead = [item for item in items if isinstance(item, DeadLetter)]
    assert len(events) + len(dead) == len(batch)
    assert all(type(event.time) is int and MIN_TIME <= event.time <= MAX_TIME and type(event.key) is str for event in events)
    admitted = 0
    for half in (events[: len(events) // 2], events[len(events) // 2 :]):
        accepted, rejected = clock.admit(half)
        admitted += len(accepted)
        dead += rejected
        clock.route(accepted, 16)
    admitted += len(clock.release_all()[0])  # held within the lateness until the input ends
    letters = clock.count(dead)
    assert admitted + len(letters) == len(batch)
    assert all(letter.reason in REASONS and letter.detail for letter in letters)


@pytest.fixture(scope="module")
def compas_jsonl(compas_csv):
    """The COMPAS events, written as JSON lines by each test: the clean input bad records are inserted into."""
    return compas_events(compas_csv)


def run_with(events, tmp_path, name: str, spec: str):
    path = tmp_path / f"{name}.jsonl"
    write_jsonl(path, events)
    run = run_file(spec, path, tmp_path / name, fmt="jsonl", presorted=True)  # read as a stream: a liar's place in it counts
    return {family: run.read(f"{family}.jsonl") for family in ("alerts", "estimates", "dead_letters")}


def spec_with(tmp_path, specs_dir, **input_changes) -> str:
    import yaml

    spec = yaml.safe_load((specs_dir / "compas_equalized_odds.yaml").read_text())
    spec["input"].update(input_changes)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    load_plan(path)
    return str(path)


@pytest.mark.parametrize(
    "name, liar, input_changes",
    [
        ("year 9999", {"date": "9999-12-31"}, {}),
        ("four months ahead", {"date": "+120d"}, {"max_ahead": "30d"}),
    ],
)
def test_one_record_with_a_lying_clock_changes_no_result(compas_jsonl, tmp_path, specs_dir, name, liar, input_changes):
    spec = spec_with(tmp_path, specs_dir, **input_changes)
    clean = run_with(compas_jsonl, tmp_path, "clean", spec)
    middle = len(compas_jsonl) // 3
    date = liar["date"]
    if date.startswith("+"):
        from datetime import date as day
        from datetime import timedelta

        date = (day.fromisoformat(compas_jsonl[middle]["date"]) + timedelta(days=int(date[1:-1]))).isoformat()
    bad = {"event": "SCREEN", "id": "liar", "date": date, "race": "Caucasian", "sex": "Male", "age_cat": "25 - 45", "decile_score": 9}
    dirty = run_with([*compas_jsonl[:middle], bad, *compas_jsonl[middle:]], tmp_path, "dirty", spec)
    assert clean["estimates"] and clean["alerts"]
    for family in ("alerts", "estimates"):
        assert without_emitted_at(dirty[family]) == without_emitted_at(clean[family]), family
    assert [(letter["reason"], orjson.loads(letter["record"])["id"]) for letter in dirty["dead_letters"]] == [("future", "liar")]
    assert clean["dead_letters"] == []


@pytest.mark.parametrize("places", [(0,), (0, 40)], ids=["first", "first-and-fortieth"])
def test_events_dated_decades_ahead_of_a_sorted_stream_are_too_old_and_change_no_result(compas_jsonl, tmp_path, specs_dir, places):
    """An event dated 1970 before COMPAS (2013 on) would start the clock in 1970: 15,000 daily evaluations of nothing.
    Among a partition's first events, those before a silence longer than input.max_gap (365 days) are dead letters."""
    spec = str(specs_dir / "compas_equalized_odds.yaml")
    clean = run_with(compas_jsonl, tmp_path, "clean", spec)
    dirty_events = list(compas_jsonl)
    for number, place in enumerate(places):
        ancient = {"event": "SCREEN", "id": f"ancient{number}", "date": f"1970-01-0{number + 1}", "race": "Caucasian", "sex": "Male", "age_cat": "25 - 45", "decile_score": 9}
        dirty_events.insert(place, ancient)
    dirty = run_with(dirty_events, tmp_path, "dirty", spec)
    for family in ("alerts", "estimates"):
        assert without_emitted_at(dirty[family]) == without_emitted_at(clean[family]), family
    letters = [(letter["reason"], orjson.loads(letter["record"])["id"]) for letter in dirty["dead_letters"]]
    assert letters == [("too_old", f"ancient{number}") for number in range(len(places))]
    assert "lies more than 365d before the events that follow it: its partition's stream begins at 2013-01-01T00:00:00Z" in dirty["dead_letters"][0]["detail"]


def test_with_max_future_off_a_jump_to_9999_is_refused_in_bounded_memory(compas_jsonl, tmp_path, specs_dir):
    """Without the future check, the watermark jumps 8,000 years: the merge refuses the 2.9 million evaluations with one
    clear error instead of building them (13 GB before), and the run ends there."""
    import resource

    from fairstream.records.errors import EvaluationError

    spec = spec_with(tmp_path, specs_dir, max_future=None)
    middle = len(compas_jsonl) // 3
    liar = {"event": "SCREEN", "id": "liar", "date": "9999-12-31", "race": "Caucasian", "sex": "Male", "age_cat": "25 - 45", "decile_score": 9}
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(EvaluationError, match=r"2,916,460 evaluations of every 1d at once, more than evaluate.max_ticks = 1,000,000"):
        run_with([*compas_jsonl[:middle], liar, *compas_jsonl[middle:]], tmp_path, "jump", spec)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 500_000  # KiB: well under half a gigabyte more


def test_blank_lines_of_a_json_lines_input_are_counted_dead_letters(compas_jsonl, tmp_path, specs_dir):
    spec = str(specs_dir / "compas_equalized_odds.yaml")
    clean = run_with(compas_jsonl, tmp_path, "clean", spec)
    path = tmp_path / "blank.jsonl"
    lines = [orjson.dumps(event) for event in compas_jsonl]
    lines[100:100] = [b"", b"   "]
    path.write_bytes(b"\n".join(lines) + b"\n")
    run = run_file(spec, path, tmp_path / "blank", fmt="jsonl")
    letters = run.read("dead_letters.jsonl")
    assert [(letter["reason"], letter["detail"], letter["offset"]) for letter in letters] == [("not_json", "an empty record", 100), ("not_json", "an empty record", 101)]
    assert without_emitted_at(run.read("estimates.jsonl")) == without_emitted_at(clean["estimates"])


def test_a_key_longer_than_max_key_chars_is_a_dead_letter():
    """A 200 kB key would be held by its open trial for the trial's whole life."""
    assert parse(screen(id="k" * 256)).key == "k" * 256
    letter = parse(screen(id="k" * 200_000))
    assert letter.reason == "key_too_long" and "200,000 characters" in letter.detail and len(letter.record) < 2200  # 2,000 characters, the length and the hash


def test_a_string_longer_than_max_value_chars_is_a_dead_letter():
    """A group name of 100,000 characters would be in every record that counts the group: its records would outgrow a
    Kafka message; so a declared string field is bounded like the key (read from JSON, and from CSV text)."""
    assert parse(screen(race="r" * 256)).fields["race"] == "r" * 256
    letter = parse(screen(race="r" * 100_000))
    assert letter.reason == "value_too_long" and "'race' has 100,000 characters; at most input.max_value_chars = 256" in letter.detail
    from_text = RecordParser(parse_spec(spec_dict()).input, strings=True).parse(RawRecord(0, 1, {**screen(race="r" * 300), "score": "3"}))
    assert from_text.reason == "value_too_long"


def test_a_run_beyond_max_open_counts_evicted_trials_and_says_so(compas_jsonl, tmp_path, specs_dir, caplog):
    """COMPAS (one input partition) with room for 160 open trials: the trials already open are kept and close two years
    on, so estimates keep coming; the trials without room are counted in every estimate and the gauge; a warning says so."""
    import yaml

    spec = yaml.safe_load((specs_dir / "compas_equalized_odds.yaml").read_text())
    spec["trial"]["max_open"] = 160
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    logger = logging.getLogger("fairstream.trials")  # heard here even where a CLI test routed `fairstream` to stderr
    logger.addHandler(caplog.handler)
    try:
        out = run_with(compas_jsonl, tmp_path, "bounded", str(path))
    finally:
        logger.removeHandler(caplog.handler)
    trials = out["estimates"][-1]["trials"]
    defendants = sum(1 for event in compas_jsonl if event["event"] == "SCREEN")
    assert trials["evicted"] > 6000 and trials["closed"] + trials["evicted"] == defendants
    counted = [record for record in out["estimates"] if record["trials"]["closed"]]
    first_screening = min(event["date"] for event in compas_jsonl if event["event"] == "SCREEN")
    assert counted and counted[0]["event_time"][:4] == str(int(first_screening[:4]) + 2)  # the first kept trials close 730 days on
    assert trials["closed"] > 160 and any(cell.get("trials") for cell in out["estimates"][-1]["parts"]["false_positive_rate"]["groups"].values())
    assert metrics.REGISTRY.get_sample_value("fairstream_evicted_trials", {"monitor": "compas-equalized-odds"}) == trials["evicted"]
    assert any("reached its 160 open trials" in message for message in caplog.messages)


def test_ten_thousand_group_names_are_counted_not_tracked(compas_jsonl, tmp_path, specs_dir):
    """Every defendant of a random race of 10,000: each part tracks the 256 groups (metric.max_groups) that came first
    and counts the rest in `untracked`, so no estimate grows with the number of groups, and no trial is lost."""
    import random

    import yaml

    rng = random.Random(3)
    events = [{**event, "race": f"group-{rng.randrange(10_000):05d}"} if event["event"] == "SCREEN" else event for event in compas_jsonl]
    spec = yaml.safe_load((specs_dir / "rtlola_compas_equalized_odds.yaml").read_text())
    spec["publish"] = {"min_cell": 1}  # every count readable
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    out = run_with(events, tmp_path, "groups", str(path))
    last = out["estimates"][-1]
    counted = 0
    for part, body in last["parts"].items():
        assert len(body["groups"]) == 256
        assert last["untracked"][part]["groups"] > 1000
        counted += sum(cell["trials"] for cell in body["groups"].values()) + last["untracked"][part]["trials"]
    assert counted == sum(1 for event in compas_jsonl if event["event"] == "SCREEN") == last["trials"]["closed"]
    assert max(len(orjson.dumps(record)) for record in out["estimates"]) < 200_000
