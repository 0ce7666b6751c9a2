"""The trial folds compiled at install do exactly what their source does interpreted: the build changes speed, never meaning."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from types import ModuleType

import pytest

import fairstream.trials.folds as folds
import fairstream.trials.layout as layout_module
from fairstream.records.events import Event
from fairstream.records.timefmt import DAY
from fairstream.trials.layout import TrialLayout
from tests.helpers import plan_of

SOURCE = Path(folds.__file__).with_name("folds.py")

needs_compiled = pytest.mark.skipif(not folds.COMPILED, reason="the folds run interpreted (no C compiler at install)")


def interpreted() -> ModuleType:
    """`pipeline/trials/folds.py` run from its source, under another name, beside the compiled module."""
    spec = importlib.util.spec_from_file_location("folds_interpreted", SOURCE)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    assert not module.COMPILED
    return module


LAYOUTS = {
    "packed states, opening kinds, a closing kind": {},
    "packed states, any kind opens": {"trial": {"opens_on": None}},
    "tuple states (a numeric slot)": {"variables": {"score": {"last": "SCREEN", "field": "score"}}},
}
"""Spec changes (see `tests.helpers.SPEC`) that take each path of the folds."""


def random_events(seed: int) -> list[Event]:
    """Kinds that open, observe, close, and one that no trial takes, over a few dozen keys that reopen after closing."""
    rng = random.Random(seed)
    events, day = [], 0
    for _ in range(3000):
        day += rng.randrange(3)
        key = f"k{rng.randrange(60)}"
        kind = rng.choice(["SCREEN", "SCREEN", "RECIDIVISM", "RECIDIVISM", "DECIDE", "OTHER"])
        fields = {"id": key, "race": rng.choice("abc"), "score": rng.randrange(1, 11), "hired": rng.random() < 0.5}
        events.append(Event(key, day * DAY, kind, fields))
    return events


def layout_of(changes: dict, remembering: ModuleType, monkeypatch: pytest.MonkeyPatch) -> TrialLayout:
    """A layout whose remembering openers and observers come from `remembering` (compiled or interpreted)."""
    with monkeypatch.context() as patch:
        patch.setattr(layout_module, "remembering_opener", remembering.remembering_opener)
        patch.setattr(layout_module, "remembering_observer", remembering.remembering_observer)
        return plan_of(**changes).layout


@needs_compiled
@pytest.mark.parametrize("changes", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_compiled_and_interpreted_folds_leave_the_same_trials_schedule_and_closed_trials(changes, monkeypatch):
    plain = interpreted()
    runs = []
    for module in (folds, plain):
        layout = layout_of(changes, module, monkeypatch)
        trials: dict = {}
        closing_times: list = []
        closing_keys: list = []
        due: list = []
        unmatched = []
        events = random_events(seed=7)
        for start in range(0, len(events), 97):
            batch = events[start : start + 97]
            unmatched.append(module.fold(trials, batch, layout, closing_times, closing_keys, due))
        runs.append((trials, closing_times, closing_keys, due, unmatched))
    compiled_run, interpreted_run = runs
    assert compiled_run == interpreted_run
    trials, closing_times, _, due, unmatched = compiled_run
    assert trials and closing_times and due
    opens_on_kinds = changes.get("trial", {"opens_on": ...})["opens_on"] is not None
    assert (sum(unmatched) > 0) == opens_on_kinds  # events of a kind that opens nothing, where some kinds open none
