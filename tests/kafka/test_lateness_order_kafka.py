"""On a real broker too, any arrival order within `input.lateness` gives the records of the time-ordered stream, on a
topic of one partition and of two."""

from __future__ import annotations

import pytest

from fairstream.connectors.compas import compas_events
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.replay import EventFields, replay
from fairstream.runner import FileInput, FileOutput, FileRun, Job, KafkaInput, KafkaOutput, execute
from tests.kafka.outputs import file_outputs, kafka_outputs, without_emitted_at
from tests.lateness_orders import spec_with_lateness, time_ordered, within_lateness

pytestmark = pytest.mark.kafka


@pytest.mark.parametrize("partitions", [1, 2])
def test_a_topic_in_any_order_within_the_lateness_writes_what_the_ordered_stream_writes(kafka_bootstrap, topic, specs_dir, compas_csv, tmp_path, partitions):
    spec = spec_with_lateness(specs_dir, tmp_path)
    events = compas_events(compas_csv)
    write_jsonl(tmp_path / "ordered.jsonl", time_ordered(events))
    execute(Job(spec=str(spec), input=FileInput(path=str(tmp_path / "ordered.jsonl"), format="jsonl"), output=FileOutput(out_dir=str(tmp_path / "out"))))
    expected = {family: without_emitted_at(records) for family, records in file_outputs(FileRun(tmp_path / "out")).items()}

    replay(within_lateness(events, seed=10 + partitions), kafka_bootstrap, topic, fields=EventFields("id", "date"), partitions=partitions)
    alerts = f"{topic}-alerts"
    execute(Job(spec=str(spec), input=KafkaInput(bootstrap=kafka_bootstrap, topics=[topic], tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=alerts)))
    got = {family: without_emitted_at(records) for family, records in kafka_outputs(kafka_bootstrap, alerts).items()}
    assert expected["estimates"] and expected["alerts"]
    assert got == expected
