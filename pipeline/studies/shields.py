"""Studies of the runtime fairness shields: the synthesized energy function in words, a Monte Carlo of the one-group
energy shield, and a comparison of every shield on decision streams recommended by a classifier on COMPAS, Adult and
German Credit.

The Monte Carlo applies `EnergyShield.decide`'s rule to many runs at once with numpy; the comparison runs each
library shield itself, one decision at a time, on the same seeded stream.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from pipeline.errors import InputError
from pipeline.paths import SHARED_DATA
from pipeline.shields import (
    TWO_GROUPS,
    ArrivalModel,
    Dynamic,
    GroupShield,
    MonotoneEnergy,
    NaiveParityShield,
    StaticFair,
    Target,
    fixpoint,
    uniform,
)

# ---------------------------------------------------------------------------------------------------------------------
# The chosen energy function in words


def energy_form(energy: MonotoneEnergy) -> str:
    """The piecewise formula of a member of the monotone family with its numbers filled in (see `MonotoneEnergy`)."""
    a, k, c, x_l, v = energy.alpha, energy.k, energy.pivot, energy.limit_point, energy.level
    (s_lo, s_hi), (lo, hi) = energy.target.running, energy.domain
    if energy.side == 0:
        return f"ζ(x) = {a:.4g}·min(1, (|x − {c:.4g}|/d)^{k}), d = {c - s_lo:.4g} below the pivot and {s_hi - c:.4g} above"
    if energy.side == 1:
        return (
            f"ζ(x) = {v:.4g} + {a * (1 - v):.4g}·min(1, (({x_l:.4g} − x)/{x_l - s_lo:.4g})^{k}) for x ≤ {x_l:.4g}; "
            f"{v:.4g}·(({c:.4g} − x)/{c - x_l:.4g})^{k} up to the pivot {c:.4g}; "
            f"{a:.4g}·min(1, ((x − {c:.4g})/{hi - c:.4g})^{k}) above it"
        )
    return (
        f"ζ(x) = {v:.4g} + {a * (1 - v):.4g}·min(1, ((x − {x_l:.4g})/{s_hi - x_l:.4g})^{k}) for x ≥ {x_l:.4g}; "
        f"{v:.4g}·((x − {c:.4g})/{x_l - c:.4g})^{k} down to the pivot {c:.4g}; "
        f"{a:.4g}·min(1, (({c:.4g} − x)/{c - lo:.4g})^{k}) below it"
    )


# ---------------------------------------------------------------------------------------------------------------------
# Monte Carlo of the one-group energy shield

QUANTILES = (0.05, 0.5, 0.95)
"""The band of F_t drawn over the runs: 5 %, median, 95 %."""


def shield_paths(energy: MonotoneEnergy, decisions: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """The shielded decisions of many runs at once, by `EnergyShield.decide`'s rule; `decisions` and `draws` are (runs, steps).

    At step t (t decisions so far) F = ones/t; below the pivot 1 is favoured, above it 0, at it nothing; an unfavoured
    raw decision becomes the favoured one when its draw u < ζ(F). The first decision is always kept.
    """
    runs, steps = decisions.shape
    shielded = np.empty((runs, steps), dtype=np.int8)
    ones = np.zeros(runs, dtype=np.int64)
    for t in range(steps):
        raw = decisions[:, t]
        if t == 0:
            out = raw
        else:
            before = ones / t
            favoured = (before < energy.pivot).astype(raw.dtype)
            zeta = np.asarray(energy(before))
            flip = (before != energy.pivot) & (raw != favoured) & (draws[:, t] < zeta)
            out = np.where(flip, favoured, raw)
        shielded[:, t] = out
        ones += out
    return shielded


@dataclass(frozen=True)
class Simulation:
    """Summaries over the runs of the shielded process, each per time t = 1 … steps.

    `band` holds the 5 %, 50 % and 95 % quantiles of F_t (rows in `QUANTILES` order); `violations` the mean number of
    t' ≤ t at or after the burn-in with F_t' ∉ S; `interference` the mean share of the first t decisions flipped.
    """

    p: float
    target: Target
    runs: int
    steps: int
    band: np.ndarray
    violations: np.ndarray
    interference: np.ndarray
    final_mean: float
    ever_violated: float
    expected_interference: float
    """|x* − p|, the long-run interference of the energy function."""


def simulate(energy: MonotoneEnergy, p: float, runs: int, steps: int, seed: int) -> Simulation:
    """Run `runs` seeded paths of `steps` raw Bernoulli(p) decisions through the energy shield and summarize them."""
    rng = np.random.default_rng(seed)
    decisions = (rng.random((runs, steps)) < p).astype(np.int8)
    draws = rng.random((runs, steps))
    shielded = shield_paths(energy, decisions, draws)
    times = np.arange(1, steps + 1)
    fairness = np.cumsum(shielded, axis=1) / times
    s_lo, s_hi = energy.target.running
    violated = ((fairness < s_lo) | (fairness > s_hi)) & (times >= energy.target.burn_in)
    flipped = np.cumsum(shielded != decisions, axis=1) / times
    return Simulation(
        p=p,
        target=energy.target,
        runs=runs,
        steps=steps,
        band=np.quantile(fairness, QUANTILES, axis=0),
        violations=np.cumsum(violated, axis=1).mean(axis=0),
        interference=flipped.mean(axis=0),
        final_mean=float(fairness[:, -1].mean()),
        ever_violated=float(violated.any(axis=1).mean()),
        expected_interference=abs(fixpoint(energy, p) - p),
    )


# ---------------------------------------------------------------------------------------------------------------------
# Shields on classifier-recommended decision streams


@dataclass(frozen=True)
class Dataset:
    """How to read one reference data set: its rows, the favourable label, and the two groups (group a, group b)."""

    name: str
    file: str
    load: Callable[[Path], pd.DataFrame]
    group: str
    groups: tuple[str, str]
    outcome: str
    favourable: object
    """The value of `outcome` that is the favourable outcome (no recidivism in two years, income >50K, good credit)."""


COMPAS_FEATURES = ["age", "priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count", "c_charge_degree", "sex"]
ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation", "relationship",
    "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income",
]  # fmt: skip


def _compas(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path)
    return frame[frame["race"].isin(["Caucasian", "African-American"])][[*COMPAS_FEATURES, "race", "two_year_recid"]]


def _adult(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, header=None, names=ADULT_COLUMNS, skipinitialspace=True)


DATASETS = {
    "compas": Dataset("compas", "compas-scores-two-years.csv", _compas, "race", ("Caucasian", "African-American"), "two_year_recid", 0),
    "adult": Dataset("adult", "adult.data", _adult, "sex", ("Male", "Female"), "income", ">50K"),
    "german": Dataset("german", "german-credit.csv", pd.read_csv, "sex9", ("male", "female"), "classlabel21", 1),
}
NO_FILE = "{name}: no data file at {path}; the reference data sets live in ../shared/data beside the project"
UNKNOWN_DATASET = "unknown data set {name!r}; known: {known}"

SHIELDS = ("unshielded", "naive", "energy", "static-fair", "dynamic")
KAPPA = 0.1
"""DP threshold: the baselines keep |r_a − r_b| ≤ κ; the energy shield's S = [−κ, κ] and L = [−κ/2, κ/2]."""
PERIOD = 50
"""FinHzn horizon of Static-Fair and Dynamic (the fairness-shield paper's periodic T = 50); also the energy burn-in."""
ENERGY_ALPHA = 0.5
"""Steepness of the two-group energy member: the violation DP is one-group only, so the member is chosen by hand."""


def dataset(name: str) -> Dataset:
    """The data set called `name`, or an `InputError` naming the known ones."""
    if name not in DATASETS:
        raise InputError(UNKNOWN_DATASET.format(name=name, known=", ".join(DATASETS)))
    return DATASETS[name]


@dataclass(frozen=True)
class Recommendations:
    """A classifier's recommended decisions (1 = favourable) and the group of each individual, for training and test rows."""

    train_groups: np.ndarray
    train_decisions: np.ndarray
    test_groups: np.ndarray
    test_decisions: np.ndarray
    accuracy: float


def recommend(data: Dataset, seed: int, data_dir: Path = SHARED_DATA) -> Recommendations:
    """Train a logistic regression on a seeded, stratified half of the rows (features one-hot and scaled, the group left
    out) and return its decisions on both halves."""
    path = data_dir / data.file
    if not path.is_file():
        raise InputError(NO_FILE.format(name=data.name, path=path))
    frame = data.load(path)
    frame = frame[frame[data.group].isin(data.groups)].dropna().reset_index(drop=True)
    labels = (frame[data.outcome] == data.favourable).to_numpy(int)
    features = pd.get_dummies(frame.drop(columns=[data.group, data.outcome]), dtype=float).to_numpy(float)
    groups = frame[data.group].to_numpy(str)
    x_train, x_test, y_train, y_test, g_train, g_test = train_test_split(
        features, labels, groups, test_size=0.5, stratify=labels, random_state=seed
    )
    scaler = StandardScaler().fit(x_train)
    model = LogisticRegression(max_iter=2000).fit(scaler.transform(x_train), y_train)
    train, test = model.predict(scaler.transform(x_train)), model.predict(scaler.transform(x_test))
    return Recommendations(g_train, train.astype(int), g_test, test.astype(int), float((test == y_test).mean()))


def build_shields(data: Dataset, recommendations: Recommendations) -> dict[str, object]:
    """The four shields for the pair of groups, their arrival model and raw gap p̄ estimated from the training decisions."""
    a, b = data.groups
    decisions, groups = recommendations.train_decisions, recommendations.train_groups
    raw_gap = decisions[groups == a].mean() - decisions[groups == b].mean()
    target = Target(PERIOD, (-KAPPA, KAPPA), (-KAPPA / 2, KAPPA / 2))
    model = ArrivalModel.estimate(groups.tolist(), decisions.tolist(), pair=data.groups)
    return {
        "naive": NaiveParityShield((-KAPPA, KAPPA), groups=data.groups),
        "energy": GroupShield(MonotoneEnergy(float(raw_gap), target, ENERGY_ALPHA, domain=TWO_GROUPS), target, groups=data.groups),
        "static-fair": StaticFair(model, PERIOD, KAPPA, groups=data.groups),
        "dynamic": Dynamic(model, PERIOD, KAPPA, groups=data.groups),
    }


def run_stream(shield, decisions: Sequence[int], groups: Sequence[str], seed: int) -> np.ndarray:
    """The shielded decisions of one stream; the i-th decision draws `uniform(seed, str(i))`."""
    state = shield.start()
    out = np.empty(len(decisions), dtype=int)
    for index, (decision, group) in enumerate(zip(decisions, groups, strict=True)):
        verdict = shield.decide(int(decision), state, uniform(seed, str(index)), group)
        state = shield.next_state(state, verdict)
        out[index] = verdict.shielded
    return out


def parity_path(decisions: np.ndarray, first: np.ndarray) -> np.ndarray:
    """|r_a − r_b| after each decision; 0 while a group is empty, as in `parity_gap`.

    >>> parity_path(np.array([1, 0, 1, 1]), np.array([True, False, False, True])).tolist()
    [0.0, 1.0, 0.5, 0.5]
    """
    seen_a, seen_b = np.cumsum(first), np.cumsum(~first)
    ones_a, ones_b = np.cumsum(decisions * first), np.cumsum(decisions * ~first)
    both = (seen_a > 0) & (seen_b > 0)
    rate_a = np.divide(ones_a, seen_a, out=np.zeros(len(decisions)), where=both)
    rate_b = np.divide(ones_b, seen_b, out=np.zeros(len(decisions)), where=both)
    return np.abs(rate_a - rate_b)


@dataclass(frozen=True)
class Comparison:
    """One data set's stream through every shield: |r_a − r_b| after each decision and the flips, per shield in `SHIELDS` order."""

    name: str
    groups: tuple[str, str]
    decisions: int
    accuracy: float
    raw_gap: float
    parity: dict[str, np.ndarray]
    interventions: dict[str, int]

    def at_third(self, shield: str) -> float:
        """|r_a − r_b| after one third of the stream."""
        return float(self.parity[shield][self.decisions // 3 - 1])

    def at_end(self, shield: str) -> float:
        """|r_a − r_b| after the whole stream."""
        return float(self.parity[shield][-1])


def compare(name: str, decisions: int, seed: int, data_dir: Path = SHARED_DATA, on_shield: Callable[[], None] = lambda: None) -> Comparison:
    """Sample `decisions` individuals (seeded, with replacement) from the test half and run their recommended decisions
    through every shield; `on_shield` is called after each shield has run."""
    data = dataset(name)
    recommendations = recommend(data, seed, data_dir)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(recommendations.test_decisions), size=decisions)
    raw, groups = recommendations.test_decisions[picks], recommendations.test_groups[picks]
    first = groups == data.groups[0]
    shields = build_shields(data, recommendations)
    outputs = {"unshielded": raw}
    on_shield()
    for label, shield in shields.items():
        outputs[label] = run_stream(shield, raw.tolist(), groups.tolist(), seed)
        on_shield()
    return Comparison(
        name=name,
        groups=data.groups,
        decisions=decisions,
        accuracy=recommendations.accuracy,
        raw_gap=float(shields["energy"].energy.p),
        parity={label: parity_path(outputs[label], first) for label in SHIELDS},
        interventions={label: int((outputs[label] != raw).sum()) for label in SHIELDS},
    )
