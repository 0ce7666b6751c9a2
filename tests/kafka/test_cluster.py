"""A job over several machines (`fairstream run … --addresses … --process-id N`): two processes on two loopback
addresses (127.0.0.2 and 127.0.0.3), and in two network namespaces where the test runs as root, write the one-process
run's records, on file partitions (each output file whole on one machine) and on Kafka; one process killed and both
restarted with `--recovery` lose nothing."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from fairstream.connectors.compas import compas_events
from fairstream.connectors.replay import replay
from fairstream.runner import FileRun, Job, KafkaInput, KafkaOutput, execute, run_file
from tests.conftest import SPECS
from tests.helpers import wait_until
from tests.kafka.outputs import comparable, file_outputs, kafka_outputs
from tests.kafka.test_faults import Scenario, finish

HOSTS = ("127.0.0.2", "127.0.0.3")
"""Two loopback addresses, as two machines' addresses: the processes reach each other over TCP only."""
SPEC = str(SPECS / "compas_equalized_odds.yaml")


def addresses() -> str:
    """HOST:PORT for each host, on a port free there."""
    found = []
    for host in HOSTS:
        with socket.socket() as probe:
            probe.bind((host, 0))
            found.append(f"{host}:{probe.getsockname()[1]}")
    return ";".join(found)


def start_cluster(arguments: list[str], out_of=None, *, listed: str | None = None, inside=None) -> list[subprocess.Popen]:
    """The same `fairstream run` on each host, process 1 first (it waits for process 0, which makes the outputs ready);
    `out_of(index)` gives a process arguments of its own (its machine's output directory), `inside(index)` a command
    prefix (the network namespace it runs in)."""
    listed = listed or addresses()
    processes = []
    for index in reversed(range(len(listed.split(";")))):
        own = out_of(index) if out_of else []
        prefix = inside(index) if inside else []
        command = [*prefix, sys.executable, "-m", "fairstream.cli", "run", *arguments, *own, "--addresses", listed, "--process-id", str(index)]
        processes.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True))
    return processes[::-1]


@pytest.fixture
def namespaces():
    """Two network namespaces joined by a veth pair, 10.231.0.1 and 10.231.0.2: two machines' networks on one host."""
    ip = shutil.which("ip")
    if os.geteuid() != 0 or ip is None:
        pytest.skip("network namespaces need root and iproute2")
    names = [f"fs{os.getpid() % 10000}a", f"fs{os.getpid() % 10000}b"]
    steps = [
        *(["netns", "add", name] for name in names),
        ["link", "add", f"{names[0]}v", "type", "veth", "peer", "name", f"{names[1]}v"],
        *(["link", "set", f"{name}v", "netns", name] for name in names),
        *(["-n", name, "addr", "add", f"10.231.0.{index + 1}/24", "dev", f"{name}v"] for index, name in enumerate(names)),
        *(["-n", name, "link", "set", device, "up"] for name in names for device in (f"{name}v", "lo")),
    ]
    try:
        for step in steps:
            made = subprocess.run([ip, *step], capture_output=True, text=True, timeout=10)
            if made.returncode != 0:
                pytest.skip(f"no network namespaces here: ip {' '.join(step)}: {made.stderr.strip()}")
        yield names
    finally:
        for name in names:
            subprocess.run([ip, "netns", "del", name], capture_output=True, timeout=10)


def split_compas(compas_csv: Path, tmp_path: Path) -> str:
    """COMPAS split by defendant into two files, one input partition each."""
    parts = tmp_path / "parts"
    split = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "split", SPEC, "--input", str(compas_csv), "--partitions", "2", "--out", str(parts)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert split.returncode == 0, split.stderr
    return str(parts / "part-*.jsonl")


def test_two_machines_on_file_partitions_write_the_one_process_records_each_file_on_one(compas_csv, tmp_path):
    inputs = split_compas(compas_csv, tmp_path)
    machines = [tmp_path / f"machine-{index}" for index in range(len(HOSTS))]
    for process in start_cluster([SPEC, "--input", inputs], lambda index: ["--out", str(machines[index])]):
        finish(process, timeout=300)
    alone = run_file(SPEC, inputs, tmp_path / "alone")
    written = {path.name: machine for machine in machines for path in machine.glob("*.jsonl")}
    assert sorted(written) == sorted(path.name for path in (tmp_path / "alone").glob("*.jsonl"))
    assert all(sum((machine / name).exists() for machine in machines) == 1 for name in written)  # each file whole on one machine
    gathered = tmp_path / "gathered"
    gathered.mkdir()
    for name, machine in written.items():
        (gathered / name).write_bytes((machine / name).read_bytes())
    assert comparable(file_outputs(FileRun(gathered))) == comparable(file_outputs(alone))


def test_two_processes_in_two_network_namespaces_write_the_one_process_records(namespaces, compas_csv, tmp_path):
    inputs = split_compas(compas_csv, tmp_path)
    listed = ";".join(f"10.231.0.{index + 1}:{2101 + index}" for index in range(2))
    cluster = start_cluster(
        [SPEC, "--input", inputs, "--out", str(tmp_path / "cluster")], listed=listed, inside=lambda index: ["ip", "netns", "exec", namespaces[index]]
    )  # fmt: skip
    for process in cluster:
        finish(process, timeout=300)
    alone = run_file(SPEC, inputs, tmp_path / "alone")
    assert comparable(file_outputs(FileRun(tmp_path / "cluster"))) == comparable(file_outputs(alone))


@pytest.mark.kafka
def test_two_machines_on_kafka_write_the_one_process_records(kafka_bootstrap, topic, compas_csv):
    replay(list(compas_events(compas_csv)), kafka_bootstrap, topic, partitions=2)
    for process in start_cluster([SPEC, "--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", f"{topic}-cluster", "--until-end"]):
        finish(process, timeout=300)
    execute(Job(spec=SPEC, input=KafkaInput(bootstrap=kafka_bootstrap, topics=[topic], tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=f"{topic}-alone")))
    cluster, alone = kafka_outputs(kafka_bootstrap, f"{topic}-cluster"), kafka_outputs(kafka_bootstrap, f"{topic}-alone")
    assert len(alone["alerts"]) >= 2 and len(alone["estimates"]) > 100
    assert comparable(cluster) == comparable(alone)


@pytest.mark.kafka
def test_a_machine_killed_and_both_restarted_with_recovery_lose_nothing(kafka_bootstrap, tmp_path):
    scenario = Scenario(kafka_bootstrap, tmp_path, f"cluster-kill-{tmp_path.name}", per_day=800, partitions=2)
    recovery = ["--recovery", str(tmp_path / "recovery"), "--snapshot-every", "0.2"]
    arguments = [scenario.spec, "--bootstrap", kafka_bootstrap, "--topic", scenario.topic, "--alerts", scenario.alerts, "--until-end", *recovery]
    first = start_cluster(arguments)
    wait_until(lambda: scenario.estimates_so_far() > 0, "the cluster's first estimates", timeout=120)
    assert first[1].poll() is None, "process 1 ended before it could be killed"
    os.killpg(first[1].pid, signal.SIGKILL)
    first[1].wait()
    try:
        _, err = first[0].communicate(timeout=60)  # its peer gone, process 0 stops too
    except subprocess.TimeoutExpired:
        os.killpg(first[0].pid, signal.SIGKILL)
        pytest.fail("process 0 went on without its peer for 60 s")
    assert first[0].returncode == 1
    assert err.decode().strip().splitlines()[-1].startswith("error: process 0: a peer of the cluster"), err.decode()[-1500:]
    assert "Traceback" not in err.decode()
    for process in start_cluster(arguments):
        finish(process, timeout=600)
    scenario.assert_nothing_lost()
