"""Kafka client settings: the bootstrap servers and the librdkafka properties (TLS, SASL, timeouts …) that every
client of a job uses, read from a Java-style properties file and `FAIRSTREAM_KAFKA_*` environment variables, so that
secrets need not sit in files or on command lines. Property values are never shown: only their names are."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from fairstream.records.errors import ConnectorError, UsageError

ENV_PREFIX = "FAIRSTREAM_KAFKA_"
"""FAIRSTREAM_KAFKA_BOOTSTRAP gives the servers; FAIRSTREAM_KAFKA_<PROPERTY> any property, dots written as underscores
(FAIRSTREAM_KAFKA_SASL_PASSWORD is sasl.password)."""
BOOTSTRAP = "bootstrap.servers"
LIBRDKAFKA = logging.getLogger("librdkafka")
"""Where every client's librdkafka log lines go: nowhere unless a command runs with -v (librdkafka retries on its own,
and what a user must know reaches them as one error or warning line)."""
LIBRDKAFKA.addHandler(logging.NullHandler())
LIBRDKAFKA.propagate = False
CONNECT_TIMEOUT = 10.0
"""Seconds a command waits for the broker's first answer before it says the broker cannot be reached, and why."""


class KafkaConnection(BaseModel):
    """Where a job's Kafka is and how its clients connect to it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bootstrap: str = Field(min_length=1)
    properties: dict[str, str] = Field(default_factory=dict, repr=False)
    """librdkafka properties given to every client: producers, consumers, the admin client, the dataflow's source and sink."""

    def client(self, defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A client's configuration: fairstream's `defaults` for that client, then the user's properties, then the servers."""
        return {"logger": LIBRDKAFKA, **(defaults or {}), **self.properties, BOOTSTRAP: self.bootstrap}

    def __str__(self) -> str:
        names = f" ({', '.join(sorted(self.properties))} set)" if self.properties else ""
        return f"{self.bootstrap}{names}"

    def unreachable(self, error: BaseException, errors: ClientErrors, client: Any) -> ConnectorError:
        """The one-line error for a client that got no answer: the cause librdkafka reported (a refused certificate or
        password, a refused connection) where there was one, else the exception's text."""
        client.poll(0.1)  # serves the error callbacks queued while the request waited
        cause = errors.cause or _text(error)
        if "brokers are down" in cause and "security.protocol" not in self.properties:
            cause += " (no answer in plaintext: is it running, and does it want TLS or SASL? then set security.protocol in --kafka-config)"
        return ConnectorError(f"cannot reach Kafka at {self.bootstrap}: {cause}")


class ClientErrors:
    """A client's `error_cb`: keeps what librdkafka reported, which names causes (certificate verification,
    authentication, a refused connection) that the exception of a failed request does not."""

    def __init__(self) -> None:
        self.reported: list[str] = []

    def __call__(self, error: Any) -> None:
        if len(self.reported) < 20:
            self.reported.append(error.str())

    @property
    def cause(self) -> str | None:
        """The first specific error (not the summary "N/N brokers are down"), else the last one."""
        specific = [text for text in self.reported if "brokers are down" not in text]
        if specific:
            return specific[0]
        return self.reported[-1] if self.reported else None


def _text(error: BaseException) -> str:
    inner = error.args[0] if error.args else None
    return inner.str() if hasattr(inner, "str") else str(error)


def as_connection(kafka: KafkaConnection | str) -> KafkaConnection:
    """A connection from a plain `HOST:PORT` (no properties) or an existing connection."""
    return kafka if isinstance(kafka, KafkaConnection) else KafkaConnection(bootstrap=kafka)


def read_properties(path: str | Path) -> dict[str, str]:
    """The `key=value` (or `key: value`) lines of a Java-style properties file; `#` and `!` start comments."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as err:
        raise UsageError(f"{path}: cannot read the Kafka client settings: {err.strerror}") from None
    properties: dict[str, str] = {}
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        cut = min((index for index in (line.find("="), line.find(":")) if index > 0), default=-1)
        if cut < 0:
            raise UsageError(f"{path}: line {number}: expected key=value; got a line without '='")
        properties[line[:cut].strip()] = line[cut + 1 :].strip()
    return properties


def environment_properties(environ: Mapping[str, str]) -> dict[str, str]:
    """Properties from FAIRSTREAM_KAFKA_* variables (FAIRSTREAM_KAFKA_BOOTSTRAP as bootstrap.servers)."""
    found = {}
    for name, value in environ.items():
        if name.startswith(ENV_PREFIX) and len(name) > len(ENV_PREFIX):
            key = name[len(ENV_PREFIX) :].lower().replace("_", ".")
            found[BOOTSTRAP if key == "bootstrap" else key] = value
    return found


def load_connection(bootstrap: str | None = None, config_file: str | Path | None = None, environ: Mapping[str, str] | None = None) -> KafkaConnection:
    """The connection a command uses: its `--bootstrap`, else FAIRSTREAM_KAFKA_BOOTSTRAP, else `bootstrap.servers` of
    `--kafka-config`; properties from the file, overridden by FAIRSTREAM_KAFKA_* variables."""
    environ = os.environ if environ is None else environ
    properties = {**(read_properties(config_file) if config_file else {}), **environment_properties(environ)}
    servers = bootstrap or properties.get(BOOTSTRAP)
    properties.pop(BOOTSTRAP, None)
    if not servers:
        raise UsageError(f"no Kafka bootstrap servers: give --bootstrap, {ENV_PREFIX}BOOTSTRAP or {BOOTSTRAP} in --kafka-config")
    return KafkaConnection(bootstrap=servers, properties=properties)


def checked_connection(bootstrap: str | None = None, config_file: str | Path | None = None) -> KafkaConnection:
    """`load_connection` for a command line: its client properties checked before any work starts (`check_properties`)."""
    connection = load_connection(bootstrap, config_file)
    check_properties(connection)
    return connection


_INVALID_VALUE = re.compile(r'Invalid value "(?:[^"\\]|\\.)*" for configuration property "([^"]+)"', re.DOTALL)


def check_properties(kafka: KafkaConnection) -> None:
    """Refuse (exit 2, one line) properties librdkafka does not know or will not take, before any work starts; the
    refused value is never repeated, since a secret may have been put in the wrong property."""
    from confluent_kafka import KafkaException, Producer

    try:
        Producer({**kafka.client(), "client.id": "fairstream-settings-check"})
    except KafkaException as err:
        reason = _INVALID_VALUE.sub(lambda found: f'invalid value for configuration property "{found.group(1)}"', _text(err))
        raise UsageError(f"Kafka client settings (--kafka-config, {ENV_PREFIX}*): {reason}") from None


def kafka_configured(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment names a Kafka (FAIRSTREAM_KAFKA_BOOTSTRAP)."""
    return bool((os.environ if environ is None else environ).get(f"{ENV_PREFIX}BOOTSTRAP"))
