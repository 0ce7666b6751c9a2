"""How a shield's assumption checks behave, by simulation through the runtime shield: how often they warn on streams
that keep every assumption (against the stated false-warning level), and how soon they warn on streams that break
one (decisions after the break began)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import binomtest

from fairstream.connectors.synthetic.hiring import HiringMaker, drifting_hiring_decisions
from fairstream.lab.studies.runs import median_interval
from fairstream.language.models import ShieldSpec
from fairstream.records.events import Event
from fairstream.records.timefmt import SECOND
from fairstream.shields.runtime.decisions import ShieldRun

DECISIONS = 3000
BREAK_AT = 500
"""Where a broken stream starts to stray: its decision maker moves from here to the end of the stream."""
LEVEL = 0.01

FIXED = {"decisions": "DECISION", "group": "gender", "decision": "hired", "groups": ["male", "female"], "rates": [0.6, 0.3], "share": 0.5,
         "max_violation": 0.5, "horizon": 1000, "check_level": LEVEL}  # fmt: skip
ADAPTIVE = {**{k: v for k, v in FIXED.items() if k != "rates"}, "rates_within": [[0.6, 0.9], [0.2, 0.3]]}


@dataclass(frozen=True)
class CheckCase:
    """One stream setting: how many of its runs warned, and when."""

    check: str
    stream: str
    runs: int
    warned: int
    broken: bool
    """Whether the stream breaks the assumption (then a warning is a detection, else a false warning)."""
    delays: tuple[int, ...] = ()
    """Per run that warned after its break began, the decisions from the break's start to the warning."""
    early: int = 0
    """Runs of a broken stream that warned before the break began: false warnings too."""

    @property
    def rate(self) -> float:
        return self.warned / self.runs

    @property
    def interval(self) -> tuple[float, float]:
        """The exact (Clopper–Pearson) 95 % interval of the warning rate."""
        found = binomtest(self.warned, self.runs).proportion_ci(0.95)
        return found.low, found.high

    @property
    def holds(self) -> bool:
        """A clean stream: the interval reaches down to the level; a broken one: found in nine runs of ten at least."""
        return self.interval[0] <= LEVEL if not self.broken else self.rate >= 0.9

    def delay_text(self) -> str:
        if not self.delays:
            return "—"
        low, high = median_interval(self.delays) if len(self.delays) >= 6 else (min(self.delays), max(self.delays))
        return f"{int(np.median(self.delays)):,} [{low:,}, {high:,}]"


def _first_warning(spec: ShieldSpec, events: list[dict[str, Any]], assumption: str) -> int | None:
    """The decision at which the shield's report first says `assumption` broke (None if it never did)."""
    run = ShieldRun(spec, "study")
    detectors = run.watch.detectors[assumption].values()
    for minute, event in enumerate(events):
        run.receive(Event(event["id"], 60 * SECOND * minute, event["event"], event))
        if any(detector.broken for detector in detectors):
            return run.decisions
    return None


def _case(check: str, stream: str, shield: dict[str, Any], assumption: str, start: HiringMaker, end: HiringMaker | None, over: int | None, runs: int, seed: int) -> CheckCase:
    spec = ShieldSpec.model_validate(shield)
    found = [
        _first_warning(spec, drifting_hiring_decisions(DECISIONS, start, end or start, seed + run, drift_from=BREAK_AT, over=over), assumption)
        for run in range(runs)
    ]
    warned = [at for at in found if at is not None]
    if end is None:
        return CheckCase(check, stream, runs, len(warned), broken=False)
    delays = tuple(at - BREAK_AT for at in warned if at > BREAK_AT)
    return CheckCase(check, stream, runs, len(delays), broken=True, delays=delays, early=len(warned) - len(delays))


RATES = "rates 0.6/0.3 (synthesized)"
SHARE = "share 0.5 (synthesized)"
WITHIN = "rates within [0.6, 0.9], [0.2, 0.3] (adaptive)"
CASES: tuple[tuple[str, str, dict[str, Any], str, HiringMaker, HiringMaker | None, int | None], ...] = (
    (RATES, "keeps them", FIXED, "rates", HiringMaker(0.6, 0.3), None, None),
    (SHARE, "keeps it", FIXED, "share", HiringMaker(0.6, 0.3), None, None),
    (RATES, "drift to 0.8/0.1 from decision 500 to 3,000", FIXED, "rates", HiringMaker(0.6, 0.3), HiringMaker(0.8, 0.1), None),
    (RATES, "step to 0.7/0.3 at decision 500", FIXED, "rates", HiringMaker(0.6, 0.3), HiringMaker(0.7, 0.3), 1),
    (SHARE, "drift to 0.1 from decision 500 to 3,000", FIXED, "share", HiringMaker(0.6, 0.3), HiringMaker(0.6, 0.3, 0.1), None),
    (WITHIN, "at the corner 0.6/0.3", ADAPTIVE, "rates_within", HiringMaker(0.6, 0.3), None, None),
    (WITHIN, "at the corner 0.9/0.2", ADAPTIVE, "rates_within", HiringMaker(0.9, 0.2), None, None),
    (WITHIN, "drift from 0.6/0.3 to 0.3/0.3", ADAPTIVE, "rates_within", HiringMaker(0.6, 0.3), HiringMaker(0.3, 0.3), None),
    (WITHIN, "step to 0.45/0.3 at decision 500", ADAPTIVE, "rates_within", HiringMaker(0.6, 0.3), HiringMaker(0.45, 0.3), 1),
)


def check_cases(runs: int, seed: int = 0, advance: Callable[[], None] = lambda: None) -> Iterator[CheckCase]:
    """Every setting of `CASES`, `runs` seeded streams of `DECISIONS` each."""
    for index, (check, stream, shield, assumption, start, end, over) in enumerate(CASES):
        yield _case(check, stream, shield, assumption, start, end, over, runs, seed + 10_000 * index)
        advance()
