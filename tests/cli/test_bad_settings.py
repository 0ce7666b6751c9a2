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


OPTION_VALUES = {
    "--workers": st.sampled_from(["0", "-3", "1", "2", "257", "many", "1e3"]),
    "--processes": st.sampled_from(["0", "1", "257", "-1", "two"]),
    "--format": st.sampled_from(["csv", "jsonl", "compas", "parquet", ""]),
    "--columns": st.text(alphabet="abc,", max_size=8),
    "--snapshot-every": st.sampled_from(["0", "0.05", "1", "nan", "-2", "1e400"]),
    "--metrics-port": st.sampled_from(["0", "70000", "-1", "http"]),
    "--give-up-after": st.sampled_from(["0", "5", "inf"]),
    "--out": st.sampled_from(["out", "input.jsonl/out", ""]),
    "--input": st.sampled_from(["input.jsonl", "missing.jsonl", "*.none", ""]),
    "--replication-factor": st.sampled_from(["0", "3"]),
    "--bogus": st.just("1"),
}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(options=st.lists(st.sampled_from(sorted(OPTION_VALUES)), min_size=1, max_size=3, unique=True).flatmap(
    lambda names: st.tuples(*(st.tuples(st.just(name), OPTION_VALUES[name]) for name in names))
))
def test_any_run_settings_end_in_one_error_line_and_a_documented_exit_code(tmp_path_factory, options):
    """`fairstream run` as a user types it, over a small valid input, with a few settings drawn from good and bad values:
    it succeeds, or says why in one `error:` line with exit code 1 or 2; never a traceback."""
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("settings")
    (folder / "input.jsonl").write_text('{"id": "a", "time": "2024-01-01T00:00:00Z", "event": "DECISION", "gender": "f", "hired": true}\n')
    arguments = ["hiring_demographic_parity", *(["--input", "input.jsonl"] if "--input" not in dict(options) else [])]
    for name, value in options:
        arguments += [name, value]
    result = subprocess.run([sys.executable, "-m", "fairstream.cli", "run", *arguments], capture_output=True, text=True, cwd=folder, timeout=120)
    assert result.returncode in (0, 1, 2), result.stderr
    assert "Traceback" not in result.stderr and "panicked" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if not line.startswith("warning: ")]
    if result.returncode:
        assert len(errors) == 1 and errors[0].startswith("error: "), result.stderr
    else:
        assert errors == [], result.stderr
