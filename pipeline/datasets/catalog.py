"""Each reference data set's canonical source and checksum, and where a copy is found: `../shared/data`, then the cache."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from fairstream.paths import SHARED_DATA


class DataSet(BaseModel):
    """One data set as the tests, the demo and the studies read it: its file name and the sha256 of that file."""

    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    file: str
    url: str
    """The canonical source: the file itself, or (`recode`) the file it is made from."""
    source: str
    """Who publishes it, in words."""
    sha256: str
    """Of the file as kept (after `recode` where there is one), so a copy from any mirror is checked the same way."""
    rows: int
    recode: Literal["uci-german"] | None = None


CATALOG: dict[str, DataSet] = {
    data.name: data
    for data in (
        DataSet(
            name="compas",
            title="COMPAS",
            file="compas-scores-two-years.csv",
            url="https://raw.githubusercontent.com/propublica/compas-analysis/master/compas-scores-two-years.csv",
            source="ProPublica, github.com/propublica/compas-analysis",
            sha256="c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d",
            rows=7214,
        ),
        DataSet(
            name="adult",
            title="UCI Adult",
            file="adult.data",
            url="https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data",
            source="UCI Machine Learning Repository, doi 10.24432/C5XW20",
            sha256="a0351ccac2e50adb68d08c54a6ce37daae7714fac1423a7c09577ae0f55934ba",
            rows=32561,
        ),
        DataSet(
            name="german",
            title="German Credit",
            file="german-credit.csv",
            url="https://archive.ics.uci.edu/ml/machine-learning-databases/statlog/german/german.data",
            source="UCI Machine Learning Repository, doi 10.24432/C5NC77 (german.data, its codes recoded to words)",
            sha256="e3efbae6da0f8300991047666ee22f4a133be37f3e4065eabed25d72b080cf68",
            rows=1000,
            recode="uci-german",
        ),
    )
}
"""The data sets `fairstream data get` fetches, by name."""


def cache_dir() -> Path:
    """Where `fairstream data get` keeps the files: $FAIRSTREAM_DATA, else fairstream/data under the user's cache."""
    if chosen := os.environ.get("FAIRSTREAM_DATA"):
        return Path(chosen).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fairstream" / "data"


def by_file(file: str) -> DataSet:
    """The data set kept under this file name."""
    return next(data for data in CATALOG.values() if data.file == file)


def locate(name: str) -> Path | None:
    """The data set's file in `../shared/data`, else in the cache; None where neither holds it."""
    file = CATALOG[name].file
    return next((path for path in (SHARED_DATA / file, cache_dir() / file) if path.is_file()), None)


def data_file(file: str, data_dir: Path | None = None) -> Path:
    """A data set's file by its name: in `data_dir` when one is given, else where `locate` finds it (or would put it)."""
    if data_dir is not None:
        return data_dir / file
    return locate(by_file(file).name) or cache_dir() / file


def get_line(name: str) -> str:
    """One line for a missing file: where it was looked for and the command that fetches it."""
    data = CATALOG[name]
    return f"no {data.title} file ({data.file}) in {SHARED_DATA} or {cache_dir()}: `fairstream data get {name}` fetches it from {data.source}"
