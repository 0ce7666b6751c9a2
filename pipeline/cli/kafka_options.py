"""The Kafka options every command that talks to Kafka shares: where the broker is and how to connect to it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from fairstream.connectors.kafka_config import ENV_PREFIX, KafkaConnection, checked_connection, kafka_configured
from fairstream.records.errors import UsageError


def kafka_options(bootstrap_help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--bootstrap` (with the command's own help) and `--kafka-config`."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        command = click.option(
            "--kafka-config",
            type=click.Path(dir_okay=False),
            help=f"Kafka client settings: a Java-style properties file (security.protocol, ssl.ca.location, sasl.mechanism, "
            f"sasl.username, sasl.password, any librdkafka property; bootstrap.servers too). {ENV_PREFIX}<PROPERTY> "
            f"variables, dots as underscores, override it.",
        )(command)
        return click.option("--bootstrap", help=f"{bootstrap_help} Default: {ENV_PREFIX}BOOTSTRAP, else bootstrap.servers of --kafka-config.")(command)

    return decorate



def file_or_kafka(
    input_path: str | None, bootstrap: str | None, kafka_config: str | None, *, file_option: str = "--input FILE"
) -> KafkaConnection | None:
    """For commands that read a file or a topic: None for the file (`file_option` names it in messages), else the Kafka
    connection; both or neither is a usage error."""
    if input_path is not None:
        if bootstrap or kafka_config:
            raise UsageError(f"give {file_option} or a Kafka (--bootstrap, --kafka-config), not both")
        return None
    if not (bootstrap or kafka_config or kafka_configured()):
        raise UsageError(f"give {file_option}, or a Kafka: --bootstrap HOST:PORT, --kafka-config FILE or {ENV_PREFIX}BOOTSTRAP")
    return checked_connection(bootstrap, kafka_config)
