"""The job's merged alarm in the dataflow: every joining monitor's merged evidence, keyed to one place, judged in event
time by `JobEvidence`, its record linked into the job's own chain (sealed when every monitor's input has ended)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from fairstream.compiler.plan import Plan
from fairstream.engine.api import StatefulLogic, Stream, op
from fairstream.records.chain import RecordChain, combined_hash
from fairstream.records.envelope import EVIDENCE, JOB_MERGED, stamp
from fairstream.verdicts.many_pairs.job import JobEvidence


def joining(plans: Sequence[Plan]) -> list[int]:
    """The plans whose merged evidence joins the job's: every monitor that merges its pairs, where two or more do."""
    merging = [index for index, plan in enumerate(plans) if plan.monitor.merges_pairs]
    return merging if len(merging) > 1 else []


def job_name(plans: Sequence[Plan]) -> str:
    return f"job/{plans[0].spec.monitor}"


class JobStep(StatefulLogic):
    def __init__(self, evidence: JobEvidence, chain: RecordChain, name: str):
        self.evidence, self.chain, self.name = evidence, chain, name

    def on_item(self, value: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
        out = []
        found = self.evidence.take(value["monitor"], value["instant"], value["log_evidence"], value.get("final", False))
        if found is not None:
            at, body = found
            out.extend(self.chain.link_all([stamp({"job": self.name, **body}, self.name, JOB_MERGED, at)]))
        if value.get("final") and self.evidence.done:
            out.append(self.chain.seal(final=True))
        return out, StatefulLogic.RETAIN

    def snapshot(self) -> tuple[JobEvidence, RecordChain]:
        return copy.deepcopy((self.evidence, self.chain))


def new_job_step(plans: Sequence[Plan], resume: tuple[JobEvidence, RecordChain] | None = None) -> JobStep | None:
    """The job's alarm over its joining monitors (from a snapshot where `resume` gives one); None where fewer than two join."""
    members = joining(plans)
    if not members:
        return None
    name = job_name(plans)
    alpha = min(plans[index].monitor.rule.alpha for index in members)
    monitors = tuple(plans[index].monitor.name for index in members)
    evidence, chain = resume or (JobEvidence(monitors, alpha), RecordChain(name, combined_hash([plans[index].monitor.spec_sha256 for index in members])))
    return JobStep(evidence, chain, name)


def job_alarm(plans: Sequence[Plan], monitored: Stream[dict[str, Any]]) -> Stream[dict[str, Any]]:
    """The monitors' records without their evidence, and the job's alarm and seal."""
    split = op.branch("split-evidence", monitored, lambda record: record["type"] == EVIDENCE)
    if not joining(plans):
        return split.falses

    def job_logic(resume: tuple[JobEvidence, RecordChain] | None) -> JobStep:
        return new_job_step(plans, resume)  # type: ignore[return-value]

    keyed = op.map("key-job", split.trues, lambda item: ("job", item))
    job = op.key_rm("unkey-job", op.stateful("job", keyed, job_logic))
    return op.merge("with-job", split.falses, job)
