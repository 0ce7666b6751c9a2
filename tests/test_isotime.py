"""The compiled reader of common ISO 8601 times agrees with the standard library on valid instants, and hands every
other value to the Python parser, so the errors are the same as without it."""

from __future__ import annotations

import calendar
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairstream.records.timefmt import _iso, time_parser

pytestmark = pytest.mark.skipif(time_parser("iso") is _iso, reason="installed without a C compiler: only the Python parser runs")


def reference(text: str) -> int:
    """Epoch milliseconds by the standard library (naive times are UTC)."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return calendar.timegm(moment.utctimetuple()) * 1000 + moment.microsecond // 1000


def outcome(parse, value):
    try:
        return parse(value)
    except Exception as err:  # the kind and text of the error must match too
        return type(err).__name__, str(err)


@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)), st.sampled_from(["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S+00:00", "%Y-%m-%d"]))
def test_valid_times_match_the_standard_library(moment, pattern):
    text = f"{moment.year:04d}" + moment.strftime(pattern.replace("%Y", "", 1))
    assert time_parser("iso")(text) == reference(text)


@pytest.mark.parametrize(
    "value",
    [
        "2013-02-29", "2012-02-29", "2013-02-29T00:00:00Z", "0000-01-01", "0000-01-01T00:00:00Z", "2013-13-01", "2013-00-10",
        "2013-01-01T24:00:00Z", "2013-01-01T23:60:00Z", "2013-01-01T23:59:60Z", "2013-01-01X00:00:00", "2013/01/01",
        "２０１３-01-01", "2013-01-01T00:00:00+01:00", "2013-01-01T00:00:00.250Z", "2013-01-01T00:00:00-00:00", "20130101",
        "2013-1-01T00:00:00Z", "", " 2013-01-01", 1357000000, None, b"2013-01-01", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z",
    ],
)  # fmt: skip
def test_every_other_value_reads_as_the_python_parser_reads_it(value):
    assert outcome(time_parser("iso"), value) == outcome(_iso, value)
