"""Values of the group's topics cut into messages a broker takes: whole again however they interleave, never a value
that lost a part, and the newest whole checkpoint of each name found among tombstones and a half-written newer one."""

from __future__ import annotations

import os
import random

from fairstream.connectors.group.chunks import Joiner, chunks, head, latest_values, part_keys


def test_a_value_comes_back_whole_from_its_parts():
    rng = random.Random(1)
    for value in (b"", b"x", os.urandom(5000), bytes(rng.randrange(4) for _ in range(300_000))):
        parts = chunks(value, size=1000)
        assert all(len(part) <= 1008 for part in parts)
        assert [head(part) for part in parts] == [(place, len(parts)) for place in range(len(parts))]
        joiner = Joiner()
        assert [joiner.add(b"k", part) for part in parts][-1] == value


def test_interleaved_writers_and_a_writer_that_died_mid_value():
    a, b = os.urandom(4000), os.urandom(3000)
    parts_a, parts_b = chunks(a, size=700), chunks(b, size=700)
    assert len(parts_a) > 2 and len(parts_b) > 2
    joiner = Joiner()
    whole = []
    stream = [(b"a", parts_a[0], 0), (b"b", parts_b[0], 1), (b"a", parts_a[1], 2)]  # a's writer dies here
    for key, part, offset in stream:
        assert joiner.add(key, part, offset) is None
    assert joiner.earliest_open() == 0  # a reader stopping now goes on at a's first part
    for offset, part in enumerate(parts_a, start=3):  # a's new owner writes it again, whole
        whole.append(joiner.add(b"a", part, offset))
    assert whole[-1] == a and joiner.earliest_open() == 1
    for part in parts_b[1:]:
        whole.append(joiner.add(b"b", part, 99))
    assert whole[-1] == b and joiner.earliest_open() is None
    assert Joiner().add(b"a", parts_a[1]) is None  # a part without its start is no value


def test_the_newest_whole_checkpoint_of_each_name():
    old, new, half = os.urandom(2500), os.urandom(2600), os.urandom(2700)
    messages = []
    for name, step, value in (("0", 4, old), ("1", 2, os.urandom(10))):
        parts = chunks(value, size=1000)
        messages += list(zip(part_keys(name, step, len(parts)), parts))
    newer = chunks(new, size=1000)
    messages += list(zip(part_keys("0", 9, len(newer)), newer))
    messages += [(key, None) for key in part_keys("0", 4, len(chunks(old, size=1000)))]  # the old one deleted
    halfway = chunks(half, size=1000)
    messages += list(zip(part_keys("0", 12, len(halfway)), halfway))[:-1]  # the newest lost its last part
    messages += [(b"job", b"digest"), (None, b"keyless")]
    found = latest_values(messages)
    assert found["0"] == (9, len(newer), new)
    assert set(found) == {"0", "1"} and found["1"][0] == 2
