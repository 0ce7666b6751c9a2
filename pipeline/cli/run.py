"""`fairstream run SPEC`: monitor a file or a Kafka topic and print what was found."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.cli.kafka_options import file_or_kafka, kafka_options
from fairstream.compiler.load import load_plans
from fairstream.compiler.plan import Plan
from fairstream.jobs import FORMATS, Cluster, FileInput, FileOutput, Job, KafkaInput, KafkaOutput
from fairstream.language.metric import tests_ratio
from fairstream.membership import run_member
from fairstream.paths import RUNBOOK_URL
from fairstream.process.lifecycle import stopped_by
from fairstream.records.errors import InputError, UsageError
from fairstream.records.hints import FIXES
from fairstream.records.timefmt import parse_duration
from fairstream.runner import execute, guess_format, job_plans, resume_blocker
from fairstream.verdicts.summary import final_rates, floor_lines, part_gaps, proxied, rested_on, when
from fairstream.verdicts.tally import REJECTED_SHARE, MonitorTally, RunTally, late_line
from fairstream.verdicts.tracked import unseen_line


def print_summary(monitor: MonitorTally, dead_letters: dict[str, int], unwritten: int = 0, plan: Plan | None = None) -> None:
    """Final per-group estimates, first violation per part and pair, and alert and dead-letter counts."""
    last, final = monitor.latest_published, monitor.last
    if last is not None and final is not None:
        rows = final_rates(last)
        counted = any(r.hits is not None for r in rows)  # rates count hits; means and benefit rates do not
        shrunk = bool(last.get("confidence")) and any(r.estimate is not None for r in rows)  # a prior weighted as κ > 0 trials
        console.table(
            ("Final " if last == final else "Latest ") + ("rates" if counted else "estimates") + ("" if last == final else " published")
            + f" {'after' if 'row' in last else 'at'} {when(last)}"
            + (f" (MAP: prior {last['prior']}, κ = {last['confidence']})" if shrunk else ""),
            ["part", "group", "rate" if counted else "estimate", *(["MAP"] if shrunk else []), *(["hits"] if counted else []), "trials"],
            [
                (r.part, r.group, *(("suppressed",) if r.suppressed else (r.rate,)), *([r.estimate] if shrunk else []), *([r.hits] if counted else []), r.trials)
                for r in rows
            ],
            right=range(2, 6),
        )
        if any(r.suppressed for r in rows):
            console.console.print("suppressed: a cell of fewer trials than the spec's publish.min_cell, withheld from every record")
        if plan is not None and final is not None:
            for line in floor_lines(final, plan.spec.evidence_floor, plan.spec.estimator.min_trials is None):
                console.warning(line)
        console.console.print(f"closed trials: {last['trials']['closed']}, incomplete: {last['trials']['incomplete']}")
        if last != final:
            console.console.print(f"at the last evaluation, {when(final)}, the window holds too few trials to publish")
        print_part_gaps(last, shrunk)
    elif final is not None and final["trials"]["closed"]:
        console.console.print(f"closed trials: {final['trials']['closed']:,}, none of them counted in a group the metric estimates", soft_wrap=True)
    else:
        console.console.print("no trial closed: nothing to estimate")
    if final is not None and proxied(final):
        from fairstream.verdicts.proxy import proxy_lines  # groups as probabilities alone need numpy

        for line in proxy_lines(final):
            console.warning(line)
    if final is not None and final.get("unseen_groups"):
        console.warning(unseen_line(final["monitor"], final["unseen_groups"], final.get("unlisted_groups", {})))
    if final is not None and final["trials"].get("evicted"):
        console.warning(not_kept_line(final["trials"]))
    if final is not None and final["trials"].get("unfinished"):
        console.warning(
            f"{final['trials']['unfinished']:,} trial(s) still open at the end of the input, counted in no group "
            "(does every trial receive an event the spec's trial section closes it on, or a close_after?)"
        )
    violations = monitor.first_violations()
    if violations and final is not None:
        measure = "ratio then" if tests_ratio(final["metric"]) else "gap then"
        if rested_on(final, tests_ratio(final["metric"])).startswith("raw_"):
            measure = f"raw {measure}"  # the tests rest on the raw counts; the MAP point is in the records
        evidence = any(v.evidence for v in violations)
        console.table(
            f"First violation per part and pair of groups ({final['verdict']} verdicts"
            + ("; each constraint's δ split over its groups" if any("constraint" in body for body in final["parts"].values()) else "")
            + ")",
            ["part", "higher", "lower", "first violated", measure, *(["evidence"] if evidence else [])],
            [(v.part, v.high, v.low, v.day, v.value, *([v.evidence or ""] if evidence else [])) for v in violations],
            right=(4,),
        )
    if final is not None:
        for part, body in sorted(final["parts"].items()):
            selective = [group for group, cell in body["groups"].items() if cell.get("labels") == "selective"]
            if selective:
                console.warning(
                    f"{part}: the labels missing for {', '.join(selective)} all share one prediction, so the labels seen "
                    "are a biased sample and those rates are withheld; declare label: {variable, observed_when} to bound them"
                )
        if monitor.latest_published is None or monitor.latest_published is not final:
            statuses = {part: body["status"] for part, body in sorted(final["parts"].items()) if "status" in body}
            if statuses:
                console.console.print("status at the end: " + ", ".join(f"{part} {status}" for part, status in statuses.items()), soft_wrap=True)
        for part, body in sorted(final["parts"].items()):
            if body.get("time_to_verdict"):
                console.console.print(f"to decide {part}: {describe_time_to_verdict(body['time_to_verdict'])}", soft_wrap=True)
    for change in monitor.changes:
        console.console.print(
            f"changed: {change['part']} {change['pair'][0]} − {change['pair'][1]} moved {change['direction']} at {change['changed_at']} "
            f"(found {change['found_at']}): gap {change['gap_before']:.4f} → {change['gap_after']:.4f}",
            soft_wrap=True,
        )
    if monitor.somewhere is not None:
        console.console.print(somewhere_line(monitor.somewhere), soft_wrap=True)
    for trigger, (raised, cleared) in sorted(monitor.triggers.items()):
        console.console.print(f"trigger {trigger}: raised {raised} time(s), cleared {cleared}{'; raised at the end' if raised > cleared else ''}", soft_wrap=True)
    certifications = (
        f", {monitor.certifications} certification(s), {monitor.uncertifications} uncertification(s)"
        if final is not None and final["verdict"] not in ("point", "change")
        else f", {len(monitor.changes)} change(s)"
        if final is not None and final["verdict"] == "change"
        else ""
    )
    console.console.print(
        f"alerts: {monitor.violations} violation(s), {monitor.recoveries} recovery(ies){certifications}; dead letters: {sum(dead_letters.values())}"
        + (f" ({', '.join(f'{k}: {v}' for k, v in sorted(dead_letters.items()))})" if dead_letters else "")
        + (f"; {unwritten:,} past dead_letters.max_file_bytes counted, not written" if unwritten else ""),
        soft_wrap=True,
    )


def not_kept_line(trials: dict) -> str:
    """What trial.max_open cost a run: the trials it did not keep, as a share of those opened."""
    evicted = trials["evicted"]
    opened = trials["closed"] + trials["incomplete"] + evicted + trials.get("unfinished", 0)
    return (
        f"not kept: {evicted:,} of {opened:,} trial(s) ({evicted / opened:.1%}) opened while trial.max_open trials were open; "
        "the estimates leave them out, so they stand for the trials that found room (raise trial.max_open, about 150 bytes a trial, to count every one)"
    )


def print_part_gaps(record: dict, shrunk: bool) -> None:
    """Every part's gap (or ratio) and status, violated or not: of the raw rates, the MAP one beside it where a prior is set."""
    gaps = part_gaps(record)
    if not gaps:
        return
    name = "ratio" if tests_ratio(record["metric"]) else "gap"
    mapped = shrunk and any(gap.estimated is not None for gap in gaps)
    console.table(
        f"Each part's {name} {'after' if 'row' in record else 'at'} {when(record)} ({record['verdict']} verdicts)",
        ["part", "higher", "lower", name, *([f"MAP {name}"] if mapped else []), "threshold", "status"],
        [(g.part, g.high, g.low, g.raw, *([g.estimated] if mapped else []), g.threshold, g.status) for g in gaps],
        right=range(3, 6),
    )


def describe_time_to_verdict(needed: dict) -> str:
    """`about 1,353 more trials of Male and 325 of Female to be certified, at today's rates`."""
    counts = [f"{count:,} {'more trials of ' if index == 0 else 'of '}{group}" for index, (group, count) in enumerate(needed["trials"].items())]
    return f"about {' and '.join(counts)} to be {needed['toward']}, at today's rates"


def print_run(tally: RunTally, plans: list[Plan]) -> None:
    """The summary of every monitor of a run, from what the run itself wrote."""
    for plan in plans:
        name = plan.spec.monitor
        if len(plans) > 1:
            console.console.rule(f"monitor {name}")
        print_summary(tally.monitors.get(name, MonitorTally()), tally.dead_letters, tally.unwritten, plan)
    if tally.job_alarm is not None:
        console.console.print(job_line(tally.job_alarm), soft_wrap=True)
    if tally.accepted and tally.rejected > REJECTED_SHARE * tally.read:
        for line in tally.leading_rejections():
            console.warning(f"dead letters {line}")
    for partition, late, read in tally.late_shares():
        console.warning(late_line(partition, late, read))
    notifications = tally.notifications_line()
    if notifications is not None and tally.notifications and tally.notifications["undelivered"]:
        console.warning(notifications)
    elif notifications is not None:
        console.console.print(notifications, markup=False, soft_wrap=True)



class _Duration(click.ParamType):
    """A duration as specs write it (`183d`, `12h`, `30s`), in seconds."""

    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        try:
            seconds = parse_duration(value) / 1000
        except ValueError as err:
            self.fail(str(err), param, ctx)
        if seconds <= 0:
            self.fail(f"a duration above 0 is needed; got {value!r}", param, ctx)
        return seconds


DURATION = _Duration()

@click.command()
@click.argument("specs", nargs=-1, required=True, type=click.Path())
@click.option(
    "--input",
    "input_paths",
    multiple=True,
    help="CSV or JSON-lines file of events, or the ProPublica COMPAS CSV; repeat it or give a quoted glob ('parts/*.jsonl') "
    "for several files, each one input partition (split by key: see `fairstream split`).",
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Input file format; guessed from the file name when omitted.")
@click.option("--sorted", "presorted", is_flag=True, help="The input files are in event-time order already: read them as they are instead of sorting each first (as the spec's input.sorted).")
@click.option("--columns", help="A CSV input without a header line: its column names, comma-separated (default: the spec's input.columns).")
@click.option("--out", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False), help="With --input: directory for alerts.jsonl, estimates.jsonl, dead_letters.jsonl.")
@kafka_options("Kafka bootstrap servers, HOST:PORT: read --topic, write to --alerts.")
@click.option(
    "--topic",
    "topics",
    multiple=True,
    help="With --bootstrap: a topic of decision events; repeat it for several co-partitioned topics, read as one stream "
    "(default: the spec's input.topics, else decisions).",
)
@click.option("--alerts", "alerts_topic", default="fairness-alerts", show_default=True, help="With --bootstrap: alert topic (estimates go to <alerts>.estimates, dead letters to <alerts>.dlq).")
@click.option("--until-end", is_flag=True, help="With --bootstrap: stop at the end of the topic instead of tailing it (a topic that does not exist is an error; tailing waits for it).")
@click.option("--replication-factor", type=click.IntRange(1), help="With --bootstrap: replicas of each output topic fairstream creates (default: the broker's default.replication.factor; 1 on brokers before Kafka 2.4).")
@click.option("--give-up-after", type=click.FloatRange(min=1), help="Tailing: exit with an error once the broker has not answered for this many seconds (default: keep retrying, reporting every 30 s).")
@click.option("--retention", type=DURATION, help="How long the run keeps its records (e.g. 183d, the EU AI Act's six months): output files rotate and their segments go once older; output topics are created with this retention.ms. Default: keep everything.")
@click.option("--rotate-every", type=DURATION, default="1d", show_default=True, help="With --retention and --out: start a new segment of each output file this often.")
@click.option("--recovery", type=click.Path(file_okay=False), help="Recovery store directory: resume from the last snapshot after a crash.")
@click.option("--snapshot-every", default=2.0, show_default=True, type=click.FloatRange(min=0.1), help="Seconds between recovery snapshots.")
@click.option("--metrics-port", type=click.IntRange(1, 65535), help="Serve Prometheus metrics at /metrics, a health check at /healthz and readiness at /readyz on this port while the run lasts (process i of --processes: port + i).")
@click.option("--metrics-host", default="127.0.0.1", show_default=True, help="Address the metrics endpoint listens on; it has no authentication: expose it (0.0.0.0) only behind a proxy that authenticates.")
@click.option("--alertmanager", metavar="URL", help="Post violations, recoveries and certifications to this Alertmanager (its v2 API, e.g. http://127.0.0.1:9093).")
@click.option("--webhook", "webhooks", metavar="URL", multiple=True, help="Post every alert record as JSON to this URL; repeatable.")
@click.option("--runbook-url", default=RUNBOOK_URL, show_default=True, envvar="FAIRSTREAM_RUNBOOK_URL", metavar="URL", help="The runbook Alertmanager alerts point to (each to its section, #fairnessviolation …): a copy of your own, or FAIRSTREAM_RUNBOOK_URL.")
@click.option("--signing-key", type=click.Path(dir_okay=False), help="An Ed25519 private key (PEM): sign every record's chain hash, so `fairstream verify --public-key` tells this run's records from rewritten ones (needs fairstream[audit]).")
@click.option("--allow-empty", is_flag=True, help="Exit 0 even when no record was accepted (by default that is an error).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 256), help="Worker threads per process (at most 256).")
@click.option("--processes", default=1, show_default=True, type=click.IntRange(1, 256), help="Cooperating worker processes (at most 256).")
@click.option("--addresses", metavar="HOST:PORT;HOST:PORT…", help="Run one process of a job spread over machines: every process's address, in process order, the same on each machine (with --process-id).")
@click.option("--process-id", type=click.IntRange(0), help="With --addresses: this process's place in the list (0 makes the outputs ready; the others wait for it).")
@click.option("--group", metavar="NAME", help="With --bootstrap: run as one member of this Kafka consumer group; members on any machines share the topic's partitions and may join or leave at any time.")
@reports_errors
def run(
    specs: tuple[str, ...],
    input_paths: tuple[str, ...],
    fmt: str | None,
    presorted: bool,
    columns: str | None,
    out_dir: str,
    bootstrap: str | None,
    kafka_config: str | None,
    topics: tuple[str, ...],
    alerts_topic: str,
    until_end: bool,
    replication_factor: int | None,
    give_up_after: float | None,
    retention: float | None,
    rotate_every: float,
    recovery: str | None,
    snapshot_every: float,
    metrics_port: int | None,
    metrics_host: str,
    alertmanager: str | None,
    webhooks: tuple[str, ...],
    runbook_url: str,
    signing_key: str | None,
    allow_empty: bool,
    workers: int,
    processes: int,
    addresses: str | None,
    process_id: int | None,
    group: str | None,
) -> None:
    """Monitor SPECS over an input file (--input) or a Kafka topic (--bootstrap).

    Each SPEC is a spec file, a bundled spec's name or a folder of specs; several are monitored over one read of the
    input, their alerts and estimates in the same outputs (each record names its monitor).
    """
    spec = specs[0] if len(specs) == 1 else list(specs)
    if group is not None and (processes > 1 or addresses or workers > 1):
        raise UsageError("--group runs one process a member: start more members instead of --processes, --addresses or --workers")
    cluster = cluster_of(addresses, process_id, processes)
    kafka = file_or_kafka(input_paths[0] if input_paths else None, bootstrap, kafka_config)
    started = time.perf_counter()
    if kafka is None:
        job = Job(
            spec=spec,
            input=FileInput(
                path=input_paths[0] if len(input_paths) == 1 else list(input_paths),
                format=fmt or guess_format(input_paths[0]),
                columns=columns.split(",") if columns else None,
                sorted=presorted,
            ),
            output=FileOutput(out_dir=out_dir, retention_s=retention, rotate_every_s=rotate_every),
            recovery=recovery,
            snapshot_seconds=snapshot_every,
            metrics_port=metrics_port, metrics_host=metrics_host, alertmanager=alertmanager, webhooks=list(webhooks), runbook_url=runbook_url, signing_key=signing_key,
        )
    else:
        read = list(topics) or spec_topics(spec)
        topic = ", ".join(map(repr, read))
        job = Job(
            spec=spec,
            input=KafkaInput(bootstrap=kafka.bootstrap, topics=read, tail=not until_end, give_up_after=give_up_after),
            output=KafkaOutput(bootstrap=kafka.bootstrap, alerts=alerts_topic, replication_factor=replication_factor, retention_s=retention),
            recovery=recovery,
            snapshot_seconds=snapshot_every,
            kafka_config=kafka_config,
            metrics_port=metrics_port, metrics_host=metrics_host, alertmanager=alertmanager, webhooks=list(webhooks), runbook_url=runbook_url, signing_key=signing_key,
            group=group,
        )
        if not until_end:
            console.console.print(f"monitoring {topic} on {kafka}; alerts to {alerts_topic!r} (Ctrl-C to stop)", soft_wrap=True)
    tally = run_member(job) if group is not None else execute(job, workers=workers, processes=processes, own_process=True, cluster=cluster)
    if stopped_by():
        console.stopped(stopped_by(), recovery, resume_blocker(job))
        return
    if kafka is None:
        written = [name for name in ("alerts.jsonl", "estimates.jsonl", "dead_letters.jsonl", "seals.jsonl") if (Path(out_dir) / name).exists()]
        done = f"wrote {', '.join(written) or 'nothing'} to {out_dir} in {time.perf_counter() - started:.1f} s"
    else:
        done = f"read {topic} to {'their' if len(read) > 1 else 'its'} end in {time.perf_counter() - started:.1f} s; alerts are on {alerts_topic!r}"
    if cluster is not None:
        console.console.print(f"process {cluster.process_id} of {len(cluster.addresses)}: the counts below are of the input partitions it read", soft_wrap=True)
    print_run(tally, job_plans(job))
    console.console.print(done, soft_wrap=True)
    if tally.group is not None:
        console.console.print(member_line(group, tally.group), soft_wrap=True)
        return  # a member may have been given no partition: the group's records are on the topics
    if not tally.accepted and not tally.resumed and not allow_empty:  # a resumed run may find nothing new
        raise InputError(nothing_accepted(tally, "the input" if kafka is None else f"topics {topic} (are their names right?)" if len(read) > 1 else f"topic {topic} (is its name right?)"))


DEFAULT_TOPIC = "decisions"


def cluster_of(addresses: str | None, process_id: int | None, processes: int) -> Cluster | None:
    """The process of a job over several machines the options name; None for a job on this machine alone."""
    if addresses is None and process_id is None:
        return None
    if addresses is None or process_id is None:
        raise UsageError("--addresses and --process-id go together: every process's HOST:PORT, and this one's place among them")
    listed = [address.strip() for address in addresses.split(";") if address.strip()]
    if process_id >= len(listed):
        raise UsageError(f"--process-id {process_id} is not a place in --addresses, which lists {len(listed)} process(es) (0 to {len(listed) - 1})")
    if processes > 1:
        raise UsageError("--processes starts processes on this machine; with --addresses each machine starts its own: give one or the other")
    return Cluster(addresses=listed, process_id=process_id)


def spec_topics(spec: str | list[str]) -> list[str]:
    """The topics a job reads when --topic is not given: the spec's `input.topics`, else `decisions`."""
    return load_plans([spec] if isinstance(spec, str) else spec)[0].spec.input.topics or [DEFAULT_TOPIC]


def nothing_accepted(tally: RunTally, source: str) -> str:
    """Why a run that accepted no record fails: every record rejected (by reason), or no record at all in `source`."""
    if not tally.dead_letters:
        return f"{source} held no record to monitor; pass --allow-empty if that is expected"
    reasons = ", ".join(f"{reason}: {count:,}" for reason, count in sorted(tally.dead_letters.items()))
    leading = max(tally.dead_letters, key=lambda reason: (tally.dead_letters[reason], reason))
    return (
        f"no record was accepted: {tally.rejected:,} dead letter(s) ({reasons}); the first {leading}: {tally.examples.get(leading, '?')} "
        f"(spec: {FIXES.get(leading, 'input')}); pass --allow-empty if that is expected"
    )


def somewhere_line(record: dict[str, Any]) -> str:
    """One line for a `fairness.violated_somewhere` record: when, at what level, and the pairs that carry the evidence."""
    carriers = [f"{c['part']} {c['pair'][0]} vs {c['pair'][1]}" for c in record["carriers"]]
    leaning = [f"{p['part']} {s['pair'][0]} vs {s['pair'][1]}" for p in record["pooled"] if p["share_of_evidence"] >= 0.5 for s in p["leaning_on"]]
    named = leaning or carriers
    return (
        f"violated somewhere: the evidence merged over {record['pairs_tested']} pair(s) reached 1/α (α = {record['alpha']:g}) "
        f"at {when(record)}; carried by {', '.join(named[:5])}{' …' if len(named) > 5 else ''}"
    )


def job_line(record: dict[str, Any]) -> str:
    """One line for a `fairness.job_violated_somewhere` record: when, at what level, and the monitors it rests on."""
    leading = ", ".join(f"{entry['monitor']} ({entry['share_of_evidence']:.0%})" for entry in record["monitors"][:3])
    return f"violated somewhere in the job: the monitors' merged evidence reached 1/α (α = {record['alpha']:g}) at {record['event_time']}; carried by {leading}"


def member_line(group: str | None, outcome: dict[str, Any]) -> str:
    """What a member of a consumer group did beyond what it read: partitions and the merge it took over from others."""
    took = f"took {outcome['partitions_taken']} partition(s) and the merge {outcome['merges_taken']} time(s) over from other members"
    dropped = f"; its merge dropped {outcome['duplicate_steps']:,} step(s) merged before" if outcome["duplicate_steps"] else ""
    return f"member of consumer group {group!r}: {took}{dropped}"
