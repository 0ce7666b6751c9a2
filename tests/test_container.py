"""The container files, checked without a Docker engine: the Dockerfile's base image is pinned to an exact version,
every file it copies exists, Python packages come from the lock files by hash, and its health check asks /healthz; the
lock pins every dependency of pyproject.toml within its range on every Python the project claims; the compose file parses, mounts files that exist, and
its observability profile wires the monitor's metrics port to Prometheus and the provisioned dashboard to Grafana."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).parents[1]


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per instruction, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in dockerfile.read_text().splitlines() if not line.lstrip().startswith("#")))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line.strip() else "") for line in joined.splitlines() if line.strip()]


def locked(lock: Path, python: str = "3.12") -> dict[str, tuple[str, int]]:
    """Each package the lock installs on this Python (its markers evaluated): its pinned version and how many hashes it carries."""
    pins: dict[str, tuple[str, int]] = {}
    environment = {"python_version": python, "python_full_version": f"{python}.0"}
    name = None
    for line in lock.read_text().splitlines():
        if match := re.match(r"^([A-Za-z0-9_.-]+)==([^\s\\;]+)\s*(?:;([^\\]*))?", line):
            applies = not match[3] or Marker(match[3]).evaluate(environment)
            name = canonicalize_name(match[1]) if applies else None
            if name:
                assert name not in pins, f"{match[1]} pinned twice for Python {python}"
                pins[name] = (match[2], 0)
        elif name and line.strip().startswith("--hash=sha256:"):
            pins[name] = (pins[name][0], pins[name][1] + 1)
    return pins


def claimed_pythons() -> list[str]:
    """Every Python minor version pyproject's requires-python admits."""
    claim = SpecifierSet(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"])
    return [f"3.{minor}" for minor in range(8, 20) if f"3.{minor}.0" in claim]


@pytest.fixture(scope="module")
def steps() -> list[tuple[str, str]]:
    return instructions(ROOT / "Dockerfile")


def test_the_base_image_is_pinned_to_an_exact_version(steps):
    arg = next(args for op, args in steps if op == "ARG" and args.startswith("PYTHON_IMAGE="))
    assert re.fullmatch(r"PYTHON_IMAGE=python:3\.12\.\d+-slim-[a-z]+(@sha256:[0-9a-f]{64})?", arg), arg
    assert [args.split()[0] for op, args in steps if op == "FROM"] == ["${PYTHON_IMAGE}", "${PYTHON_IMAGE}"]


def test_every_copied_file_exists_and_no_secret_or_data_is_copied(steps):
    copies = [args.split() for op, args in steps if op == "COPY" and "--from=" not in args]
    sources = [source for parts in copies for source in parts[:-1]]
    assert sources and all((ROOT / source).exists() for source in sources), sources
    assert not any(source in (".", "./") for source in sources)  # the context holds tests, the site and local outputs


def test_python_packages_come_from_the_lock_files_by_hash(steps):
    runs = [args for op, args in steps if op == "RUN"]
    assert any("--require-hashes -r requirements-build.lock" in run for run in runs)
    assert any("--require-hashes -r /tmp/requirements.lock" in run for run in runs)
    assert all("--no-deps" in run for run in runs if ".whl" in run or "pip wheel" in run)  # nothing resolved outside the locks
    for lock in ("requirements.lock", "requirements-build.lock"):
        assert all(hashes for _version, hashes in locked(ROOT / lock).values()), lock


@pytest.mark.parametrize("python", claimed_pythons())
def test_the_lock_pins_every_dependency_within_its_range_on_every_claimed_python(python):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    environment = {"python_version": python, "python_full_version": f"{python}.0"}
    pins = locked(ROOT / "requirements.lock", python)
    for dependency in map(Requirement, project["project"]["dependencies"]):
        if dependency.marker and not dependency.marker.evaluate(environment):
            assert canonicalize_name(dependency.name) not in pins, (dependency, python)
            continue
        version, _hashes = pins[canonicalize_name(dependency.name)]
        assert dependency.specifier.contains(version, prereleases=True), (dependency, version)
    build = locked(ROOT / "requirements-build.lock", python)
    for dependency in map(Requirement, project["build-system"]["requires"]):
        assert dependency.specifier.contains(build[canonicalize_name(dependency.name)][0]), dependency


def test_the_locks_are_resolved_for_every_claimed_python():
    """A lock resolved for one Python can pin releases an older one cannot install (numpy 2.5 needs 3.12)."""
    lowest = claimed_pythons()[0]
    for lock in ("requirements.lock", "requirements-build.lock"):
        command = next(line for line in (ROOT / lock).read_text().splitlines() if line.startswith("#    uv pip compile"))
        assert "--universal" in command and f"--python-version {lowest}" in command, (lock, command)


def test_the_health_check_asks_healthz_as_an_unprivileged_user(steps):
    check = next(args for op, args in steps if op == "HEALTHCHECK")
    assert "/healthz" in check and "FAIRSTREAM_METRICS_PORT" in check
    assert ("ENV", "FAIRSTREAM_METRICS_PORT=9100") in steps
    assert next(args for op, args in reversed(steps) if op == "USER") not in ("root", "0")


def test_the_compose_file_wires_the_observability_profile():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    for service in services.values():
        image = service.get("image", "")
        assert image == "fairstream:local" or re.fullmatch(r"[a-z0-9/_.-]+:v?\d+\.\d+\.\d+", image), image
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), volume
    profile = {name for name, service in services.items() if "observability" in service.get("profiles", [])}
    assert profile == {"prometheus", "grafana", "dashboard"}
    monitor = services["monitor"]["command"]
    assert "--metrics-port 9100" in monitor and "--metrics-host 0.0.0.0" in monitor
    scrape = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text())
    assert scrape["scrape_configs"][0]["static_configs"][0]["targets"] == ["monitor:9100"]
    assert all((ROOT / "deploy" / "prometheus" / rules).is_file() for rules in scrape["rule_files"])
    assert "./deploy/prometheus:/etc/prometheus:ro" in services["prometheus"]["volumes"]
    datasource = yaml.safe_load((ROOT / "deploy" / "grafana" / "provisioning" / "datasources" / "prometheus.yml").read_text())
    assert datasource["datasources"][0]["url"] == "http://prometheus:9090"
    mounted = dict(reversed(volume.split(":")[:2]) for volume in services["grafana"]["volumes"])
    provider = yaml.safe_load((ROOT / "deploy" / "grafana" / "provisioning" / "dashboards" / "fairstream.yml").read_text())
    assert (ROOT / mounted[provider["providers"][0]["options"]["path"]] / "fairstream.json").exists()
