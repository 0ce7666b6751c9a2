"""Every bad setting, spec and file ends in one-line errors and the documented exit code, never a traceback: a property
test over spec files (deep nesting, duplicate keys, huge files, extreme numbers, unknown keys and values) and the Kafka
client settings a user can get wrong (an unknown property; a secret put in a property the client validates)."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairstream.cli import cli

BASE = yaml.safe_load((Path(__file__).parents[2] / "specs" / "hiring_demographic_parity.yaml").read_text().replace("  on: close", "  on: 'close'"))
EXTREMES = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=3),
)


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


@st.composite
def spec_texts(draw) -> str:
    """A spec file as text: the hiring spec with one section's value replaced, a key duplicated, an unknown key added,
    or a value nested very deep; sometimes padded past the size limit."""
    spec = {section: (dict(body) if isinstance(body, dict) else body) for section, body in BASE.items()}
    section = draw(st.sampled_from(sorted(spec)))
    change = draw(st.sampled_from(["replace", "field", "field", "unknown", "deep", "duplicate", "huge"]))
    if change == "replace":
        spec[section] = draw(EXTREMES)
    elif change == "field" and isinstance(spec[section], dict) and spec[section]:
        spec[section][draw(st.sampled_from(sorted(spec[section])))] = draw(EXTREMES)
    elif change == "unknown":
        spec[draw(st.text(alphabet="abcxyz_", min_size=1, max_size=8))] = draw(EXTREMES)
    text = yaml.safe_dump(spec, sort_keys=False, allow_unicode=True)
    if change == "deep":
        text += f"extra: {deep(draw(st.sampled_from([40, 500, 5_000, 100_000])))}\n"
    elif change == "duplicate":
        text += f"{section}: {yaml.safe_dump(spec[section], default_flow_style=True).strip()}\n"
    elif change == "huge":
        text += "# " + "x" * 1_100_000 + "\n"
    return text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=spec_texts())
def test_any_spec_file_is_accepted_or_refused_in_error_lines_with_exit_code_2(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("spec") / "spec.yaml"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["spec", "check", str(path)], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        assert lines and lines[0].startswith(f"error: {path}") and all(line.startswith(("error: ", str(path))) for line in lines), result.stderr
        assert "Traceback" not in result.stderr and len(result.stderr) < 5_000


def run_with_settings(tmp_path: Path, properties: str):
    (tmp_path / "client.properties").write_text(properties)
    return CliRunner().invoke(
        cli, ["run", "compas_equalized_odds", "--bootstrap", "127.0.0.1:1", "--kafka-config", str(tmp_path / "client.properties"), "--until-end"]
    )


def test_an_unknown_kafka_property_is_one_line_and_exit_code_2(tmp_path):
    result = run_with_settings(tmp_path, "no.such.property=1\n")
    assert result.exit_code == 2
    assert result.stderr == 'error: Kafka client settings (--kafka-config, FAIRSTREAM_KAFKA_*): No such configuration property: "no.such.property"\n'


def test_a_secret_in_a_validated_property_is_not_echoed(tmp_path):
    result = run_with_settings(tmp_path, "security.protocol=hunter2-s3cret\n")
    assert result.exit_code == 2
    assert result.stderr == 'error: Kafka client settings (--kafka-config, FAIRSTREAM_KAFKA_*): invalid value for configuration property "security.protocol"\n'
    assert "hunter2" not in result.output
