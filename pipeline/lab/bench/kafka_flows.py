"""One timed flow of `fairstream bench kafka`, in its own process: `python -m fairstream.lab.bench.kafka_flows passthrough|monitor|consumer BOOTSTRAP KAFKA_CONFIG TOPIC SPEC EVENTS` (KAFKA_CONFIG may be empty)."""

import sys
import time

import orjson

from fairstream.compiler.load import load_plan
from fairstream.connectors.kafka import CONSUMER_CONFIG, kafka_sink
from fairstream.connectors.kafka_config import KafkaConnection, load_connection
from fairstream.connectors.kafka_source import kafka_source
from fairstream.dataflow import collector
from fairstream.dataflow.flow import parsed_stream
from fairstream.engine.api import Dataflow, KafkaSinkMessage, op, run_main
from fairstream.runner import Job, KafkaInput, KafkaOutput, job_flow, prepare


def passthrough(kafka: KafkaConnection, topic: str, spec: str) -> Dataflow:
    """Consume, parse, produce each event: the ceiling the monitor is measured against."""
    flow = Dataflow("passthrough")
    parsed = parsed_stream(flow, load_plan(spec), kafka_source(kafka, topic, tail=False), strings=False)
    messages = op.flat_map(
        "to-messages",
        parsed,
        lambda item: [KafkaSinkMessage(event.key.encode(), orjson.dumps(event.fields), topic=f"{topic}.passthrough") for event in item[1][1]],
    )
    op.output("write", messages, kafka_sink(kafka, f"{topic}.passthrough"))
    return flow


def plain_consumer(kafka: KafkaConnection, topic: str) -> int:
    """A plain confluent-kafka consumer: every partition read from the start to its end in batches, each value decoded
    from JSON (what any consumer does to use a record); returns the messages read."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(kafka.client({"group.id": "bench-plain", "enable.auto.commit": "false", "enable.partition.eof": "true", **CONSUMER_CONFIG}))
    partitions = list(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
    consumer.assign([TopicPartition(topic, partition, 0) for partition in partitions])
    ended: set[int] = set()
    read = 0
    while len(ended) < len(partitions):
        for message in consumer.consume(1000, 1.0):
            if message.error() is not None:
                ended.add(message.partition())
                continue
            orjson.loads(message.value())
            read += 1
    consumer.close()
    return read


def main(flow_name: str, bootstrap: str, kafka_config: str, topic: str, spec: str, events: str) -> None:
    if flow_name == "consumer":
        started = time.perf_counter()
        read = plain_consumer(load_connection(bootstrap, kafka_config or None), topic)
        print(orjson.dumps({"events": read, "seconds": time.perf_counter() - started}).decode())
        return
    if flow_name == "passthrough":
        flow = passthrough(load_connection(bootstrap, kafka_config or None), topic, spec)
    else:
        job = Job(
            spec=spec,
            input=KafkaInput(bootstrap=bootstrap, topics=[topic], tail=False),
            output=KafkaOutput(bootstrap=bootstrap, alerts=f"{topic}.alerts"),
            kafka_config=kafka_config or None,
        )
        prepare(job)
        flow = job_flow(job)
    collector.settle()  # as `fairstream run` does
    started = time.perf_counter()
    run_main(flow)
    print(orjson.dumps({"events": int(events), "seconds": time.perf_counter() - started}).decode())


if __name__ == "__main__":
    main(*sys.argv[1:])
