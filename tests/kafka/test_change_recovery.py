"""Change verdicts survive a crash: the monitor SIGKILLed at random moments and resumed from its recovery store writes,
de-duplicated, the records of an uninterrupted run, its `fairness.changed` among them with the same id."""

from __future__ import annotations

import json

import pytest

from tests.kafka.hiring_scenario import HiringScenario
from tests.kafka.test_faults import kill_while_reading
from tests.test_change_verdicts import SPEC

pytestmark = pytest.mark.kafka


@pytest.mark.timeout(900)
def test_killed_at_random_moments_the_change_is_found_once_with_its_id(kafka_bootstrap, topic, tmp_path):
    scenario = HiringScenario(kafka_bootstrap, tmp_path, topic, SPEC, seed=1, count=40_000)
    changes = [record for record in scenario.expected["alerts"] if record["type"] == "fairness.changed"]
    assert len(changes) == 1, json.dumps(scenario.expected["alerts"])[:500]
    hits = kill_while_reading(scenario, kills=3, seed=5)
    assert hits >= 1
    scenario.assert_nothing_lost()
