"""Small-cell suppression: what an estimate or alert record may publish about a small group of people (pure)."""

from __future__ import annotations

from typing import Any


def suppress_small_cells(body: dict[str, Any], min_cell: int) -> dict[str, Any]:
    """A part's record with every group cell of fewer than `min_cell` trials emptied and marked `suppressed`.

    A cell of a handful of trials can reveal one person's outcome, so its estimate, counts and interval are
    withheld; the gap, pair and verdict, already reached from the real counts, stay as they are.
    """
    groups = body["groups"]
    if all(cell["trials"] >= min_cell for cell in groups.values()):
        return body
    return {**body, "groups": {group: cell if cell["trials"] >= min_cell else _suppressed(cell) for group, cell in groups.items()}}


def _suppressed(cell: dict[str, Any]) -> dict[str, Any]:
    """The cell's fields emptied; whether it was below the evidence floor stays (a withheld cell is below it anyway)."""
    return {**dict.fromkeys(cell), "suppressed": True, **({"below_floor": True} if cell.get("below_floor") else {})}
