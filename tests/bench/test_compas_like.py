"""The COMPAS-shaped generator: valid against the COMPAS spec, time-ordered, seeded, about half of the defendants reoffend."""

from __future__ import annotations

import itertools

import orjson
import pytest

from fairstream.compiler.load import load_plan
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.compas_like import RACES, compas_like_events
from fairstream.records.events import Event, RawRecord
from fairstream.records.timefmt import DAY

DEFENDANTS = 4_000


@pytest.fixture(scope="module")
def events():
    return list(compas_like_events(DEFENDANTS, seed=1))


def test_every_event_parses_as_an_event_of_the_compas_spec(events, specs_dir):
    parser = load_plan(specs_dir / "compas_equalized_odds.yaml").parser()
    parsed = [parser.parse(RawRecord(0, offset, orjson.dumps(event))) for offset, event in enumerate(events)]
    assert all(type(item) is Event for item in parsed), next(item for item in parsed if type(item) is not Event)


def test_events_come_in_time_order_and_recidivism_follows_screening(events, specs_dir):
    parser = load_plan(specs_dir / "compas_equalized_odds.yaml").parser()
    times = [parser.parse(RawRecord(0, 0, orjson.dumps(event))).time for event in events]
    assert times == sorted(times)
    screened = {}
    for event, time in zip(events, times):
        if event["event"] == "SCREEN":
            screened[event["id"]] = time
        else:
            assert time - screened[event["id"]] >= DAY


def test_one_screening_per_defendant_and_about_half_reoffend(events):
    screens = [e for e in events if e["event"] == "SCREEN"]
    assert len(screens) == len({e["id"] for e in screens}) == DEFENDANTS
    share = (len(events) - DEFENDANTS) / DEFENDANTS
    assert 0.42 < share < 0.55
    assert {e["race"] for e in screens} == set(RACES)
    assert {e["decile_score"] for e in screens} == set(range(1, 11))


def test_some_reoffences_come_after_the_two_year_window(events, specs_dir):
    parser = load_plan(specs_dir / "compas_equalized_odds.yaml").parser()
    opened = {}
    late = 0
    for event in events:
        time = parser.parse(RawRecord(0, 0, orjson.dumps(event))).time
        if event["event"] == "SCREEN":
            opened[event["id"]] = time
        elif time - opened[event["id"]] > 730 * DAY:
            late += 1
    assert 0 < late < 0.2 * (len(events) - DEFENDANTS)


def test_the_same_seed_gives_the_same_stream_and_another_seed_does_not():
    first = list(itertools.islice(compas_like_events(500, seed=5), 600))
    assert first == list(itertools.islice(compas_like_events(500, seed=5), 600))
    assert first != list(itertools.islice(compas_like_events(500, seed=6), 600))


def test_black_defendants_get_higher_scores_than_white_ones(events):
    def high_share(race: str) -> float:
        scores = [e["decile_score"] for e in events if e["event"] == "SCREEN" and e["race"] == race]
        return sum(score > 6 for score in scores) / len(scores)

    assert high_share("African-American") > high_share("Caucasian") + 0.15


def test_write_jsonl_writes_one_line_per_event(tmp_path):
    path = tmp_path / "stream.jsonl"
    assert write_jsonl(path, compas_like_events(100, seed=2)) == len(path.read_bytes().splitlines())
