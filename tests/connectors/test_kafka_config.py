"""Kafka client settings: a Java-style properties file, FAIRSTREAM_KAFKA_* variables over it, the command's
--bootstrap over both, and no property value in anything printed."""

from __future__ import annotations

import pytest

from fairstream.connectors.kafka_config import load_connection, read_properties
from fairstream.records.errors import UsageError

PROPERTIES = """# a managed Kafka
! also a comment
bootstrap.servers = broker-1:9093,broker-2:9093
security.protocol=SASL_SSL
sasl.mechanism: SCRAM-SHA-256
sasl.username=monitor
sasl.password=s3cr3t=with=equals

ssl.ca.location=/etc/ssl/company-ca.pem
"""


def test_a_properties_file_gives_servers_and_properties(tmp_path):
    path = tmp_path / "client.properties"
    path.write_text(PROPERTIES)
    kafka = load_connection(config_file=path, environ={})
    assert kafka.bootstrap == "broker-1:9093,broker-2:9093"
    assert kafka.properties == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.username": "monitor",
        "sasl.password": "s3cr3t=with=equals",
        "ssl.ca.location": "/etc/ssl/company-ca.pem",
    }
    assert kafka.client({"acks": "1"})["bootstrap.servers"] == "broker-1:9093,broker-2:9093"


def test_variables_override_the_file_and_the_option_overrides_both(tmp_path):
    path = tmp_path / "client.properties"
    path.write_text(PROPERTIES)
    environ = {"FAIRSTREAM_KAFKA_SASL_PASSWORD": "from-env", "FAIRSTREAM_KAFKA_BOOTSTRAP": "env:9093", "FAIRSTREAM_KAFKA_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM": "none", "KAFKA_OTHER": "x"}
    kafka = load_connection(config_file=path, environ=environ)
    assert (kafka.bootstrap, kafka.properties["sasl.password"], kafka.properties["ssl.endpoint.identification.algorithm"]) == ("env:9093", "from-env", "none")
    assert load_connection("cli:9092", path, environ).bootstrap == "cli:9092"
    assert load_connection(environ={"FAIRSTREAM_KAFKA_BOOTSTRAP": "only:1"}).properties == {}


def test_no_property_value_is_shown(tmp_path):
    kafka = load_connection("b:1", environ={"FAIRSTREAM_KAFKA_SASL_PASSWORD": "s3cr3t", "FAIRSTREAM_KAFKA_SASL_USERNAME": "monitor"})
    for shown in (str(kafka), repr(kafka), f"{kafka}"):
        assert "s3cr3t" not in shown and "monitor" not in shown
    assert str(kafka) == "b:1 (sasl.password, sasl.username set)"


def test_unusable_settings_are_one_line_each(tmp_path):
    with pytest.raises(UsageError, match=r"no Kafka bootstrap servers: give --bootstrap, FAIRSTREAM_KAFKA_BOOTSTRAP or bootstrap.servers in --kafka-config"):
        load_connection(environ={})
    broken = tmp_path / "broken.properties"
    broken.write_text("security.protocol=SSL\njust words\n")
    with pytest.raises(UsageError, match=r"broken.properties: line 2: expected key=value"):
        read_properties(broken)
    with pytest.raises(UsageError, match=r"missing.properties: cannot read the Kafka client settings: No such file or directory"):
        read_properties(tmp_path / "missing.properties")
