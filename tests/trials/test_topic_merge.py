"""The event-time merge of co-partitioned topics: any split of two time-ordered topics into batches gives the order of
one topic holding both (a plain sort as reference); quiet and ended topics are not waited for."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from fairstream.records.events import Event, RawRecord
from fairstream.trials.merge import TopicMerge

KINDS = {"SCREEN": 0, "RECIDIVISM": 1}


def event(topic: str, offset: int, time: int, kind: str) -> Event:
    return Event(f"k{offset}", time, kind, {}, RawRecord(0, offset, None, topic))


def topic_events(topic: str, kind: str, times: list[int]) -> list[Event]:
    return [event(topic, offset, time, kind) for offset, time in enumerate(sorted(times))]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 50), max_size=40),
    st.lists(st.integers(0, 50), max_size=40),
    st.integers(0, 2**32 - 1),
)
def test_any_batching_of_two_ordered_topics_gives_the_one_topic_order(screen_times, outcome_times, seed):
    screens, outcomes = topic_events("screens", "SCREEN", screen_times), topic_events("outcomes", "RECIDIVISM", outcome_times)
    expected = sorted(screens + outcomes, key=lambda item: (item.time, KINDS[item.kind], item.origin.offset))
    merge, rng, released = TopicMerge(["screens", "outcomes"], KINDS), random.Random(seed), []
    queues = {"screens": list(screens), "outcomes": list(outcomes)}
    while any(queues.values()):
        batch = []
        for queue in queues.values():  # each topic delivers a prefix of what is left, in its own order
            take = rng.randint(0, len(queue))
            batch += queue[:take]
            del queue[:take]
        ended = [name for name, queue in queues.items() if not queue]
        released += merge.receive(batch, ended_topics=ended)
    released += merge.drain()
    assert released == expected


def test_a_topic_that_has_not_delivered_holds_the_other_until_it_goes_quiet():
    merge = TopicMerge(["screens", "outcomes"], KINDS)
    screens = topic_events("screens", "SCREEN", [1, 2, 3])
    assert merge.receive(screens) == []
    assert merge.receive([], quiet_topics=["outcomes"]) == screens[:2]  # another screen at 3 may come
    assert not merge.quiet
    assert merge.receive([], quiet_topics=["screens"]) == screens[2:]
    assert merge.quiet


def test_a_quiet_topic_is_waited_for_again_once_it_delivers():
    merge = TopicMerge(["screens", "outcomes"], KINDS)
    merge.receive([], quiet_topics=["outcomes"])
    first = event("outcomes", 0, 5, "RECIDIVISM")
    assert merge.receive([first]) == []  # screens has not delivered yet
    early, late = event("screens", 0, 4, "SCREEN"), event("screens", 1, 9, "SCREEN")
    assert merge.receive([early, late]) == [early]  # before outcomes' latest time, 5: another outcome at 5 may come
    assert merge.receive([], quiet_topics=["outcomes"]) == [first]  # before screens' latest, 9
    assert merge.receive([], quiet_topics=["screens"]) == [late]


def test_every_topic_quiet_is_idle_but_every_topic_ended_is_not():
    merge = TopicMerge(["a", "b"], {})
    merge.receive([], quiet_topics=["a"], ended_topics=["b"])
    assert merge.quiet and merge.idle
    merge.receive([], ended_topics=["a"])
    assert merge.quiet and not merge.idle
