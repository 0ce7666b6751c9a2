"""The throughput benchmark on a small stream: the three flows run in their own processes, read every event and report rates (speed is not asserted); the hand-written loop, an independent implementation, gives the monitor's daily gaps."""

from __future__ import annotations

import pytest

from fairstream.lab.bench.throughput import SPEC, FlowResult, Run, ThroughputResult, measure_throughput

EVENTS = 20_000


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return measure_throughput(EVENTS, keep=tmp_path_factory.mktemp("bench") / "stream.jsonl")


def test_every_flow_reads_every_generated_event(result):
    assert result.passthrough.events == result.monitor.events == result.hand.events == EVENTS
    assert result.passthrough.counts == {"events": EVENTS, "dead_letters": 0}


def test_rates_memory_and_ratio_are_positive(result):
    for flow in (result.passthrough, result.monitor, result.hand):
        assert flow.rate > 0 and flow.seconds > 0 and flow.peak_rss_mib >= flow.start_rss_mib > 0
    assert result.ratio > 0 and result.hand_ratio > 0


def test_the_hand_written_loop_evaluates_the_same_days_with_the_same_gaps(result):
    hand, monitor = result.hand.runs[-1], result.monitor.runs[-1]
    assert len(hand.gaps) == monitor.counts["fairness.estimate"] > 50
    assert result.gap_difference is not None and result.gap_difference < 1e-12
    assert hand.counts["rejected"] == 0 and hand.counts["violated_days"] > 0


def test_the_monitor_closes_one_trial_per_screened_defendant(result):
    with result.path.open() as handle:
        screened = sum('"SCREEN"' in line for line in handle)
    assert result.trials_closed == screened
    assert result.estimates > 0 and result.monitor.counts.get("pipeline.dead_letter", 0) == 0


def test_the_kept_stream_has_the_requested_size(result):
    with result.path.open() as handle:
        assert sum(1 for _ in handle) == EVENTS


def test_the_spec_under_test_exists():
    assert SPEC.is_file()


def test_the_ratio_is_the_median_of_the_rounds_each_pairing_one_run_of_each_flow():
    def runs(flow: str, seconds: list[float]) -> FlowResult:
        return FlowResult(flow, tuple(Run(flow, 1000, second, 1.0, 2.0, {}, {}) for second in seconds))

    # round 3 ran in a slow phase of the machine: every flow took three times as long
    result = ThroughputResult(1000, None, runs("passthrough", [1.0, 1.0, 3.0]), runs("monitor", [2.0, 6.0, 6.0]), runs("hand", [4.0, 3.0, 12.0]))
    assert result.ratios == [0.5, 1 / 6, 0.5] and result.ratio == 0.5
    assert result.hand_ratios == [2.0, 0.5, 2.0] and result.hand_ratio == 2.0
    assert result.monitor.rate / result.passthrough.rate == 1 / 6  # the ratio of median rates mixes the phases


def test_the_whole_process_ratio_is_the_median_of_the_rounds():
    empty = FlowResult("flow", ())
    result = ThroughputResult(1000, None, empty, empty, empty, whole_run=(1.0, 2.0, 1.5), whole_hand=(3.0, 2.0, 1.5))
    assert result.whole_ratios == [3.0, 1.0, 1.0] and result.whole_ratio == 1.0
