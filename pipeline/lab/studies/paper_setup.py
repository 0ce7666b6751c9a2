"""The fairness-shield paper's (AAAI 2025) experimental setup: its environments (data set and sensitive attribute, read
as the Fair Fairness Benchmark it builds on reads them) and its classifiers (`fair_training`), trained in batches of
1,024 (128 on German Credit). Needs the `studies` and `classifiers` extras.

Each environment's rows are split once, stratified on the label, into 40 % for training and 60 % held out (the paper's
`test_size = 0.6`). The authors' simulation splits the rows again at random before streaming its 60 %, so about 40 % of
the rows it streams trained the network; runs here stream either every row (`every-row`, the same mixture) or the
held-out rows alone (`held-out`). Group a is the attribute's value coded 0 in the paper
(female; non-White or non-Caucasian; age ≤ 25), group b the value coded 1; the label the decisions guess is the paper's:
income > 50K, good credit, and for COMPAS two-year recidivism.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from fairstream.datasets import data_file
from fairstream.lab.studies import fair_training
from fairstream.lab.studies.shields import ADULT_COLUMNS, NO_FILE
from fairstream.records.errors import InputError

HELD_OUT = 0.6
"""Share of an environment's rows held out from training (the paper's `test_size`)."""
SPLIT_SEED = 1314
"""The benchmark's default seed: the split and the network's initial weights."""
UNKNOWN_ENVIRONMENT = "unknown environment {name!r}; known: {known}"
STREAMS = ("every-row", "held-out")
"""What runs stream: every row, 40 % of them the network's training rows, as the authors' code; or the held-out 60 %."""


@dataclass(frozen=True)
class Frame:
    """One environment's rows: features (numbers and categories), the label (1 = the paper's positive class) and the
    sensitive attribute (1 = group b)."""

    features: pd.DataFrame
    labels: np.ndarray
    sensitive: np.ndarray


ADULT_MISSING = ["?", "MissingValue"]
"""How UCI's file, and the copy in the shared data, mark an unknown value; rows with one are dropped, as the benchmark does."""


def _adult(path: Path, attribute: str) -> Frame:
    """Race as White against Black (other races dropped); sex as male against female; label 1 = income > 50K."""
    frame = pd.read_csv(path, header=None, names=ADULT_COLUMNS, skipinitialspace=True, na_values=ADULT_MISSING).drop(columns="fnlwgt").dropna()
    if attribute == "race":
        frame = frame[frame["race"].isin(["White", "Black"])]
        sensitive = frame["race"] == "White"
    else:
        sensitive = frame["sex"] == "Male"
    labels = frame["income"].str.startswith(">50K")
    return Frame(frame.drop(columns=["income", attribute]), labels.to_numpy(int), sensitive.to_numpy(int))


COMPAS_KEPT = ["sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count", "c_charge_degree", "c_charge_desc", "two_year_recid"]  # fmt: skip


def _compas(path: Path, attribute: str) -> Frame:
    """ProPublica's filter (screening within 30 days of arrest, a known recidivism outcome, no ordinary traffic offence,
    a score) and AIF360's features."""
    frame = pd.read_csv(path)
    frame = frame[
        frame["days_b_screening_arrest"].between(-30, 30) & (frame["is_recid"] != -1) & (frame["c_charge_degree"] != "O") & (frame["score_text"] != "N/A")
    ][COMPAS_KEPT]
    sensitive = frame["sex"] == "Male" if attribute == "sex" else frame["race"] == "Caucasian"
    return Frame(frame.drop(columns=["two_year_recid", attribute]), frame["two_year_recid"].to_numpy(int), sensitive.to_numpy(int))


def _german(path: Path, attribute: str) -> Frame:
    """Age as ≤ 25 against > 25; sex from the personal status; label 1 = good credit."""
    frame = pd.read_csv(path)
    frame = frame.assign(Age13=np.where(frame["Age13"] > 25, "x>25", "x<=25")).rename(columns={"sex9": "sex", "Age13": "age"})
    sensitive = frame["sex"] == "male" if attribute == "sex" else frame["age"] == "x>25"
    return Frame(frame.drop(columns=["classlabel21", attribute]), (frame["classlabel21"] == 1).to_numpy(int), sensitive.to_numpy(int))


@dataclass(frozen=True)
class Environment:
    """A data set and its sensitive attribute, named as in the paper's tables ("compas, race")."""

    dataset: str
    attribute: str
    file: str
    read: Callable[[Path, str], Frame]
    groups: tuple[str, str]
    """Names of group a and group b."""
    batch: int = 1024

    @property
    def label(self) -> str:
        """The attribute as the paper's tables name it."""
        return "gender" if self.attribute == "sex" else self.attribute

    @property
    def key(self) -> str:
        """The environment's name on the command line, e.g. compas-race."""
        return f"{self.dataset}-{self.label}"

    @property
    def name(self) -> str:
        """The environment as the paper's tables name it, e.g. "compas, race"."""
        return f"{self.dataset}, {self.label}"


ENVIRONMENTS = {
    env.key: env
    for env in (
        Environment("adult", "sex", "adult.data", _adult, ("Female", "Male")),
        Environment("adult", "race", "adult.data", _adult, ("Black", "White")),
        Environment("compas", "sex", "compas-scores-two-years.csv", _compas, ("Female", "Male")),
        Environment("compas", "race", "compas-scores-two-years.csv", _compas, ("not Caucasian", "Caucasian")),
        Environment("german", "age", "german-credit.csv", _german, ("age ≤ 25", "age > 25"), batch=128),
        Environment("german", "sex", "german-credit.csv", _german, ("female", "male"), batch=128),
    )
}
"""The paper's environments but Bank Marketing, in the order of its tables."""


def environment(name: str) -> Environment:
    """The environment called `name` (compas-race), or an `InputError` naming the known ones."""
    if name not in ENVIRONMENTS:
        raise InputError(UNKNOWN_ENVIRONMENT.format(name=name, known=", ".join(ENVIRONMENTS)))
    return ENVIRONMENTS[name]


def read(env: Environment, data_dir: Path | None = None) -> Frame:
    """The environment's rows, or an `InputError` when its file is missing."""
    path = data_file(env.file, data_dir)
    if not path.is_file():
        raise InputError(NO_FILE.format(name=env.dataset, path=path))
    return env.read(path, env.attribute)


@dataclass(frozen=True)
class Scored:
    """The rows runs stream from, with the trained network's view of them."""

    scores: np.ndarray
    """P(label 1) by the network; it proposes 1 where the score exceeds ½."""
    labels: np.ndarray
    sensitive: np.ndarray
    share_b: float
    """Share of group b over all the environment's rows (the paper's P(g))."""
    label_rate: float
    """Share of label 1 over all rows (ȳ, which centres Static-BW's welfare bounds)."""
    train_accuracy: float

    @property
    def proposed(self) -> np.ndarray:
        return (self.scores > 0.5).astype(int)

    @property
    def accuracy(self) -> float:
        return float((self.proposed == self.labels).mean())


def encode(features: pd.DataFrame, train: np.ndarray) -> np.ndarray:
    """Categories one-hot, numbers standardized on the training rows."""
    numbers = features.select_dtypes("number").columns
    encoded = pd.get_dummies(features, columns=[c for c in features.columns if c not in numbers], dtype=float)
    scaler = StandardScaler().fit(encoded.loc[train, numbers])
    encoded[numbers] = scaler.transform(encoded[numbers])
    return encoded.to_numpy(float)


def scored(name: str, stream: str = "every-row", data_dir: Path | None = None, classifier: str = "erm") -> Scored:
    """Split the environment's rows (stratified, seed `SPLIT_SEED`), train `classifier` on 40 % and score the rows
    `stream` names: every row, or the held-out 60 %. Each network is trained once per process, for either stream (and
    shared by the processes forked after)."""
    frame, scores, train, test = _trained(name, data_dir, classifier)
    streamed = np.arange(len(frame.labels)) if stream == "every-row" else test
    return Scored(
        scores=scores[streamed],
        labels=frame.labels[streamed],
        sensitive=frame.sensitive[streamed],
        share_b=float(frame.sensitive.mean()),
        label_rate=float(frame.labels.mean()),
        train_accuracy=float(((scores[train] > 0.5) == frame.labels[train]).mean()),
    )


@lru_cache(maxsize=8)
def _prepared(name: str, data_dir: Path | None) -> tuple[Frame, np.ndarray, np.ndarray, np.ndarray]:
    """The environment's rows, their encoded features, and the training and held-out row indices: read once for every
    classifier."""
    frame = read(environment(name), data_dir)
    rows = np.arange(len(frame.labels))
    train, test = train_test_split(rows, test_size=HELD_OUT, stratify=frame.labels, random_state=SPLIT_SEED)
    return frame, encode(frame.features.reset_index(drop=True), np.isin(rows, train)), train, test


@lru_cache(maxsize=64)
def _trained(name: str, data_dir: Path | None, classifier: str) -> tuple[Frame, np.ndarray, np.ndarray, np.ndarray]:
    """The environment's rows, `classifier`'s score of every row, and the training and held-out row indices."""
    frame, features, train, test = _prepared(name, data_dir)
    scores = fair_training.train(classifier, features[train], frame.labels[train], frame.sensitive[train], environment(name).batch, SPLIT_SEED)(features)
    return frame, scores, train, test
