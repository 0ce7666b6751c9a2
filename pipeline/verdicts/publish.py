"""Small-cell suppression: what an estimate or alert record may publish about a small group of people (pure)."""

from __future__ import annotations

from typing import Any

import msgspec

from fairstream.records.wire import Group
from fairstream.verdicts.judge import OVERALL

GAP_FIELDS = ("gap", "ratio", "raw_gap", "raw_ratio", "interval", "log_wealth")
"""A part's numbers computed from its pair's cells (the test's evidence on the pair among them)."""

EVERY_PAIR_FIELDS = ("log_wealth_within",)
"""A part's numbers computed from every pair it compares: withheld while any of its cells is."""


def suppress_small_cells(body: dict[str, Any], min_cell: int) -> dict[str, Any]:
    """A part's record with every group cell of fewer than `min_cell` trials emptied and marked `suppressed`.

    A cell of a handful of trials can reveal one person's outcome, so its estimate, counts and interval are
    withheld, and so are the gap, ratio, interval and test evidence of a pair that names it (with the other cell they
    would give it back) or names a group with no cell published yet (an anytime verdict's tests see trials before they
    mature), and the evidence over every pair; such a pair is named in name order (which one is higher is withheld
    too). The verdict, reached from the real counts, stays as it is.
    """
    groups, pair = body["groups"], body.get("pair")
    absent = [group for group in pair or () if group not in groups and group != OVERALL]  # no trial published yet (anytime: none matured)
    if not absent and all(cell["trials"] >= min_cell for cell in groups.values()):
        return body
    published = {group: cell if cell["trials"] >= min_cell else _suppressed(cell) for group, cell in groups.items()}
    body = {**body, "groups": published}
    if "overall" in body and any(cell.get("suppressed") for cell in published.values()):  # the overall less the others would give it back
        body["overall"] = _suppressed(body["overall"])
    named = {**published, OVERALL: body["overall"]} if "overall" in body else published
    body.update({name: None for name in EVERY_PAIR_FIELDS if name in body})
    if pair and (absent or any(named[group].get("suppressed") for group in pair if group in named)):
        body.update({name: None for name in GAP_FIELDS if name in body}, gap_suppressed=True, pair=sorted(pair))  # the order would tell the gap's sign
        body.pop("interval_widened", None)
        if "interval" in body:
            body["interval_reason"] = "suppressed: the pair names a cell below publish.min_cell"
    return body


def _admits_null(field: str) -> bool:
    try:
        msgspec.convert({field: None}, Group)
    except msgspec.ValidationError:
        return False
    return True


NULLABLE = frozenset(filter(_admits_null, Group.__struct_fields__))
"""A group cell's fields that may be null: a withheld cell empties these and leaves out the rest (flags such as
`interval_widened`, which would tell something of the numbers, and fields whose type has no empty value)."""


def _suppressed(cell: dict[str, Any]) -> dict[str, Any]:
    """The cell's fields emptied; whether it was below the evidence floor stays (a withheld cell is below it anyway)."""
    emptied = {name: None for name in cell if name in NULLABLE}
    return {**emptied, "suppressed": True, **({"below_floor": True} if cell.get("below_floor") else {})}
