"""UCI's german.data (space-separated codes) recoded to the German Credit CSV the tests and studies read: a header row,
the codes of the personal, property, plan, housing, job and phone columns as words, `sex9` the sex alone."""

from __future__ import annotations

from fairstream.records.errors import InputError

HEADER = (
    "StatusAcount1", "Duration2", "Credithistory3", "Purpose4", "Creditamount5", "Savings6", "employment7", "Installment8", "sex9",
    "debtors10", "residence11", "Property12", "Age13", "installment14", "Housing15", "existingcredits16", "Job17",
    "peoplemaintenance18", "Telephone19", "foreign20", "classlabel21",
)  # fmt: skip

WORDS: dict[int, dict[str, str]] = {
    3: {"A40": "newCar", "A41": "oldCar", "A42": "furniture", "A43": "television", "A44": "domestic", "A45": "repairs",
        "A46": "education", "A47": "vacation", "A48": "retraining", "A410": "other"},  # A49 (business) stays a code
    8: {"A91": "male", "A92": "female", "A93": "male", "A94": "male", "A95": "female"},  # personal status and sex → sex
    9: {"A101": "none", "A102": "coApplicant", "A103": "guarantor"},
    11: {"A121": "realState", "A122": "lifeInsurance", "A123": "car", "A124": "unknown"},
    13: {"A141": "bank", "A142": "stores", "A143": "none"},
    14: {"A151": "rent", "A152": "own", "A153": "free"},
    16: {"A171": "unemployed", "A172": "unskilled", "A173": "skilled", "A174": "management"},
    18: {"A191": "none", "A192": "yes"},
    19: {"A201": "yes", "A202": "no"},
}  # fmt: skip
"""Column index → UCI code → word, per german.doc; the columns not named keep UCI's codes or numbers."""


def recode(text: str) -> str:
    """The CSV of german.data's text: quoted header names, one unquoted row per record, `\\n` line ends."""
    lines = [",".join(f'"{name}"' for name in HEADER)]
    for number, line in enumerate(text.splitlines(), 1):
        values = line.split()
        if not values:
            continue
        if len(values) != len(HEADER):
            raise InputError(f"german.data line {number}: {len(values)} values, expected {len(HEADER)}")
        lines.append(",".join(WORDS.get(column, {}).get(value, value) for column, value in enumerate(values)))
    return "\n".join(lines) + "\n"
