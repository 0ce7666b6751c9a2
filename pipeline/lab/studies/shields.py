"""A study of the runtime fairness shields: every shield compared on decision streams recommended by a classifier
(logistic regression or gradient-boosted trees) on COMPAS, Adult and German Credit, repeated over seeds as in the
fairness-shields paper's tables (mean ± sd, utility loss, how often fairness holds at period ends and at the end).
Each library shield runs itself, one decision at a time, on the same seeded stream. Needs the `studies` extra
(pandas, scikit-learn).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from fairstream.datasets import data_file
from fairstream.lab.periodic import ArrivalModel, Dynamic, NaiveParityShield, StaticBW, StaticFair
from fairstream.lab.periodic.finhzn import group_rates
from fairstream.lab.periodic.opportunity import OpportunityShield
from fairstream.lab.periodic.opportunity_finhzn import OpportunityPeriodic
from fairstream.records.errors import InputError
from fairstream.shields import STEEPNESS, AdaptiveGroupShield, GroupShield, ShieldError, Target, uniform
from fairstream.shields.energy.group_simulation import GroupProblem
from fairstream.shields.energy.group_synthesis import cached_synthesis, member


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
NO_FILE = "{name}: no data file at {path}; `fairstream data get {name}` fetches it (or give the folder that holds it)"
UNKNOWN_DATASET = "unknown data set {name!r}; known: {known}"

Fairness = Literal["demographic_parity", "equal_opportunity"]
FAIRNESS = ("demographic_parity", "equal_opportunity")
SHIELDS = ("unshielded", "naive", "energy", "energy-adaptive", "static-fair", "static-bw", "dynamic")
CLASSIFIERS = ("logistic", "boosting")
"""Logistic regression, and scikit-learn's histogram gradient-boosted trees."""
UNKNOWN_CLASSIFIER = "unknown classifier {name!r}; known: {known}"
KAPPA = 0.1
"""DP threshold: the baselines keep |r_a − r_b| ≤ κ; the energy shield's S = [−κ, κ] and L = [−κ/2, κ/2]."""
PERIOD = 50
"""FinHzn horizon of Static-Fair and Dynamic (the fairness-shield paper's periodic T = 50)."""
ENERGY_BURN_IN = 100
ENERGY_LAMBDA = 0.05
"""The energy shields' member is synthesized for the training half's rates and shares: the least steep whose probability
of leaving S = [−κ, κ] after the burn-in, over the stream, is at most λ (the steepest when none is: `energy_alpha`).
`energy` is told the raw gap the classifier had on its training half; `energy-adaptive` estimates it from the stream."""


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
    train_labels: np.ndarray
    test_labels: np.ndarray


def _classifier(name: str, seed: int):
    if name == "logistic":
        return LogisticRegression(max_iter=2000)
    if name == "boosting":
        return HistGradientBoostingClassifier(random_state=seed)
    raise InputError(UNKNOWN_CLASSIFIER.format(name=name, known=", ".join(CLASSIFIERS)))


def recommend(data: Dataset, seed: int, data_dir: Path | None = None, classifier: str = "logistic") -> Recommendations:
    """Train a classifier on a seeded, stratified half of the rows (features one-hot and scaled, the group left out) and
    return its decisions on both halves."""
    path = data_file(data.file, data_dir)
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
    model = _classifier(classifier, seed).fit(scaler.transform(x_train), y_train)
    train, test = model.predict(scaler.transform(x_train)), model.predict(scaler.transform(x_test))
    return Recommendations(g_train, train.astype(int), g_test, test.astype(int), float((test == y_test).mean()), y_train, y_test)


def energy_alpha(problem: GroupProblem, horizon: int) -> float:
    """The synthesized member for the problem over [τ, T], or the steepest when no member meets λ."""
    try:
        return cached_synthesis(problem, ENERGY_LAMBDA, horizon, "probability", 0.01, 0.99).alpha
    except ShieldError:
        return STEEPNESS[1]


def build_shields(data: Dataset, recommendations: Recommendations, horizon: int) -> dict[str, object]:
    """The shields for the pair of groups over a stream of `horizon` decisions; the arrival model, the rates and the raw
    gap p̄ of those that need them come from the training decisions."""
    a, b = data.groups
    decisions, groups = recommendations.train_decisions, recommendations.train_groups
    target = Target(ENERGY_BURN_IN, (-KAPPA, KAPPA), (-KAPPA / 2, KAPPA / 2))
    problem = GroupProblem(float(decisions[groups == a].mean()), float(decisions[groups == b].mean()), float((groups == a).mean()), target)
    alpha = energy_alpha(problem, max(horizon, ENERGY_BURN_IN))
    model = ArrivalModel.estimate(groups.tolist(), decisions.tolist(), pair=data.groups)
    return {
        "naive": NaiveParityShield((-KAPPA, KAPPA), groups=data.groups),
        "energy": GroupShield(member(problem, alpha, 0.01), target, groups=data.groups, placement=problem.placement),
        "energy-adaptive": AdaptiveGroupShield(target, alpha, groups=data.groups),
        "static-fair": StaticFair(model, PERIOD, KAPPA, groups=data.groups),
        "static-bw": StaticBW(model, PERIOD, KAPPA, groups=data.groups),
        "dynamic": Dynamic(model, PERIOD, KAPPA, groups=data.groups),
    }


def label_rates(first: np.ndarray, proposed: np.ndarray, labels: np.ndarray) -> tuple[float, float, float, float]:
    """P(label 1 | group, proposed decision), rows (a,0) (a,1) (b,0) (b,1), group a where `first`; ½ for an empty row.

    >>> label_rates(np.array([1, 1, 0, 0], bool), np.array([0, 1, 1, 1]), np.array([0, 1, 1, 0]))
    (0.0, 1.0, 0.5, 0.5)
    """
    rates = []
    for in_group in (first, ~first):
        for decision in (0, 1):
            rows = in_group & (proposed == decision)
            rates.append(float(labels[rows].mean()) if rows.any() else 0.5)
    return tuple(rates)  # type: ignore[return-value]


def qualified_rates(data: Dataset, recommendations: Recommendations) -> tuple[float, float, float, float]:
    """P(label 1 | group, proposed decision) on the training half, rows (a,0) (a,1) (b,0) (b,1); ½ for an empty row."""
    first = recommendations.train_groups == data.groups[0]
    return label_rates(first, recommendations.train_decisions, recommendations.train_labels)


def build_opportunity_shields(data: Dataset, recommendations: Recommendations, horizon: int) -> dict[str, object]:
    """The equal-opportunity shields: the parity shields run on the qualified (the energy member synthesized for the raw
    TPRs and the qualified's shares), and FinHzn-based periodic shields over the qualified's counts."""
    a, b = data.groups
    decisions, groups, labels = recommendations.train_decisions, recommendations.train_groups, recommendations.train_labels
    qualified = labels == 1
    target = Target(ENERGY_BURN_IN, (-KAPPA, KAPPA), (-KAPPA / 2, KAPPA / 2))
    tpr_a, tpr_b = (float(decisions[qualified & (groups == g)].mean()) for g in (a, b))
    problem = GroupProblem(tpr_a, tpr_b, float((groups[qualified] == a).mean()), target)
    alpha = energy_alpha(problem, max(int(horizon * qualified.mean()), ENERGY_BURN_IN))
    model = ArrivalModel.estimate(groups.tolist(), decisions.tolist(), pair=data.groups)
    rates = qualified_rates(data, recommendations)
    return {
        "naive": OpportunityShield(NaiveParityShield((-KAPPA, KAPPA), groups=data.groups)),
        "energy": OpportunityShield(GroupShield(member(problem, alpha, 0.01), target, groups=data.groups, placement=problem.placement)),
        "energy-adaptive": OpportunityShield(AdaptiveGroupShield(target, alpha, groups=data.groups)),
        **{kind: OpportunityPeriodic(model, rates, PERIOD, KAPPA, kind, groups=data.groups) for kind in ("static-fair", "static-bw", "dynamic")},
    }


def run_stream(shield, decisions: Sequence[int], groups: Sequence[str], seed: int, labels: Sequence[int] | None = None) -> np.ndarray:
    """The shielded decisions of one stream; the i-th decision draws `uniform(seed, str(i))`. With `labels` (equal
    opportunity), each decision's true label is revealed to the shield after it."""
    state = shield.start()
    out = np.empty(len(decisions), dtype=int)
    for index, (decision, group) in enumerate(zip(decisions, groups, strict=True)):
        verdict = shield.decide(int(decision), state, uniform(seed, str(index)), group)
        state = shield.next_state(state, verdict) if labels is None else shield.next_state(state, verdict, int(labels[index]))
        out[index] = verdict.shielded
    return out


def parity_path(decisions: np.ndarray, first: np.ndarray, counted: np.ndarray | None = None, empty: str = "vacuous") -> np.ndarray:
    """|r_a − r_b| after each decision over the decisions `counted` (default all; the qualified for equal opportunity,
    whose rates are TPRs); 0 while a group is empty, or with `empty="zero"` an empty group's rate read as 0, as in
    `parity_gap`.

    >>> parity_path(np.array([1, 0, 1, 1]), np.array([True, False, False, True])).tolist()
    [0.0, 1.0, 0.5, 0.5]
    >>> parity_path(np.array([1, 0, 1, 1]), np.array([True, False, False, True]), empty="zero").tolist()
    [1.0, 1.0, 0.5, 0.5]
    """
    counted = np.ones(len(decisions), dtype=bool) if counted is None else counted.astype(bool)
    seen_a, seen_b = np.cumsum(first & counted), np.cumsum(~first & counted)
    ones_a, ones_b = np.cumsum(decisions * (first & counted)), np.cumsum(decisions * (~first & counted))
    rate_a, rate_b = group_rates(seen_a, ones_a, seen_b, ones_b, empty)
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
    classifier: str = "logistic"
    seed: int = 0
    fairness: Fairness = "demographic_parity"
    correct: dict[str, int] = field(default_factory=dict)
    """Per shield, the shielded decisions that equal the individual's true label."""

    def at_third(self, shield: str) -> float:
        """|r_a − r_b| after one third of the stream."""
        return float(self.parity[shield][self.decisions // 3 - 1])

    def at_end(self, shield: str) -> float:
        """|r_a − r_b| after the whole stream."""
        return float(self.parity[shield][-1])

    def utility_loss(self, shield: str) -> float:
        """Interventions per decision: the share of recommended decisions the shield changed (each flip costs 1)."""
        return self.interventions[shield] / self.decisions

    def accuracy_loss(self, shield: str) -> float:
        """The fairness-shield paper's utility loss: accuracy unshielded minus accuracy shielded, in percentage points."""
        return 100 * (self.correct["unshielded"] - self.correct[shield]) / self.decisions

    def satisfied_periods(self, shield: str) -> float:
        """The share of period ends (every `PERIOD` decisions) at which |r_a − r_b| ≤ κ."""
        ends = self.parity[shield][PERIOD - 1 :: PERIOD]
        return float((ends <= KAPPA + 1e-12).mean())


def compare(
    name: str,
    decisions: int,
    seed: int,
    data_dir: Path | None = None,
    on_shield: Callable[[], None] = lambda: None,
    classifier: str = "logistic",
    fairness: Fairness = "demographic_parity",
) -> Comparison:
    """Sample `decisions` individuals (seeded, with replacement) from the test half and run their recommended decisions
    through every shield; `on_shield` is called after each shield has run. For equal opportunity each individual's true
    label is revealed to the shields after their decision, and the gap is that of the TPRs."""
    data = dataset(name)
    recommendations = recommend(data, seed, data_dir, classifier)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(recommendations.test_decisions), size=decisions)
    raw, groups = recommendations.test_decisions[picks], recommendations.test_groups[picks]
    first = groups == data.groups[0]
    opportunity = fairness == "equal_opportunity"
    truth = recommendations.test_labels[picks]
    labels = truth if opportunity else None
    shields = (build_opportunity_shields if opportunity else build_shields)(data, recommendations, decisions)
    outputs = {"unshielded": raw}
    on_shield()
    for label, shield in shields.items():
        outputs[label] = run_stream(shield, raw.tolist(), groups.tolist(), seed, labels)
        on_shield()
    energy = shields["energy"].inner if opportunity else shields["energy"]
    return Comparison(
        name=name,
        groups=data.groups,
        decisions=decisions,
        accuracy=recommendations.accuracy,
        raw_gap=float(energy.energy.p),
        parity={label: parity_path(outputs[label], first, labels) for label in SHIELDS},
        interventions={label: int((outputs[label] != raw).sum()) for label in SHIELDS},
        correct={label: int((outputs[label] == truth).sum()) for label in SHIELDS},
        classifier=classifier,
        seed=seed,
        fairness=fairness,
    )


@dataclass(frozen=True)
class ShieldSummary:
    """One shield over the repetitions of a data set and classifier: means and standard deviations (ddof 1; 0 for one run)."""

    dp_third: tuple[float, float]
    dp_end: tuple[float, float]
    utility_loss: tuple[float, float]
    accuracy_loss: tuple[float, float]
    satisfied_periods: float
    """Mean share of period ends with |r_a − r_b| ≤ κ."""
    satisfied_end: float
    """Share of repetitions that end with |r_a − r_b| ≤ κ."""


def _mean_sd(values: list[float]) -> tuple[float, float]:
    return float(np.mean(values)), float(np.std(values, ddof=1)) if len(values) > 1 else 0.0


def summarize(comparisons: Sequence[Comparison]) -> dict[str, ShieldSummary]:
    """Per shield, the repetitions' statistics (as the fairness-shields paper's tables report them)."""
    return {
        shield: ShieldSummary(
            dp_third=_mean_sd([c.at_third(shield) for c in comparisons]),
            dp_end=_mean_sd([c.at_end(shield) for c in comparisons]),
            utility_loss=_mean_sd([c.utility_loss(shield) for c in comparisons]),
            accuracy_loss=_mean_sd([c.accuracy_loss(shield) for c in comparisons]),
            satisfied_periods=float(np.mean([c.satisfied_periods(shield) for c in comparisons])),
            satisfied_end=float(np.mean([c.at_end(shield) <= KAPPA + 1e-12 for c in comparisons])),
        )
        for shield in SHIELDS
    }
