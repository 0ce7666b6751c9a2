"""Plain labels that are missing on one side of the prediction only (repayment seen only for approved loans): the
rate of such a group counts that side alone, so it is never published as an estimate nor judged (pure)."""

from __future__ import annotations

from typing import Any

from fairstream.estimators.rate import Rate

SELECTIVE = "selective"


MIN_MISSING = 10
"""Missing labels a group needs before their sharing one prediction is taken for a pattern rather than chance."""


def selective_groups(unlabeled: dict[str, Rate], rates: dict[str, Rate]) -> set[str]:
    """The groups of a true- or false-positive rate whose missing labels (at least `MIN_MISSING`) all share one
    prediction while labelled trials have the other: the labels seen are then a biased sample of the group. (Where
    every trial has the same prediction, missing labels say nothing of it.)

    >>> selective_groups({"a": Rate(hits=0, trials=40), "b": Rate(hits=3, trials=19)}, {"a": Rate(5, 60), "b": Rate(4, 50)})
    {'a'}
    """
    found = set()
    for group, missing in unlabeled.items():
        rate = rates.get(group)
        if rate is None or missing.trials < MIN_MISSING or missing.hits not in (0, missing.trials):
            continue
        other_side = rate.hits if missing.hits == 0 else rate.trials - rate.hits
        if other_side > 0:
            found.add(group)
    return found


def withhold_selective(body: dict[str, Any], selective: set[str], rates: dict[str, Rate], unlabeled: dict[str, Rate]) -> None:
    """Add the selective groups' cells to a part's record without an estimate, with how many labels were missing and
    on which side; the part can then not be certified, and says why."""
    for group in sorted(selective):
        missing = unlabeled[group]
        body["groups"][group] = {
            "estimate": None, "rate": None, "hits": rates[group].hits, "trials": rates[group].trials, "labels": SELECTIVE,
            "unlabeled": missing.trials, "unlabeled_predicted": missing.hits,
        }  # fmt: skip
    body["groups"] = dict(sorted(body["groups"].items()))
    body["labels"] = SELECTIVE
    if body.get("certified"):
        body["certified"] = False
