"""The tables of a bias audit, from a monitor's last estimate (pure).

For every part of the metric and every level — each attribute of an intersectional group (its rows counted from its
own trials, the record's marginals) and the intersections themselves — each category's n, rate and impact ratio (its rate over the
most selected category's), with a fixed-time significance figure beside each ratio: the two-sided p-value of Fisher's
exact test of its rate against the most selected category's. Categories under `min_share` of the level's trials are
left out of the ratios and listed (NYC Local Law 144 lets an audit exclude categories under 2 % of the data, with
disclosure); cells under `publish.min_cell` stay suppressed, as in every other output.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from scipy.stats import fisher_exact

from fairstream.trials.outcomes import GROUP_JOIN

MIN_SHARE = 0.02
REFERENCE = "reference"
UNDER_SHARE = "under the share"
SUPPRESSED = "suppressed"


@dataclass
class CategoryRow:
    """One category of one level: its counts, rate and, where it is compared, its impact ratio and p-value."""

    category: str
    n: int | None
    selected: int | None
    rate: float | None
    share: float | None = None
    impact_ratio: float | None = None
    p_value: float | None = None
    note: str = ""
    """`reference` (the category compared against: the most selected), or why the row is not compared: `under the
    share` (of the level's trials), `suppressed` (fewer than publish.min_cell trials)."""


@dataclass
class AuditTable:
    """One part at one level: the compared rows, and those left out with the reason."""

    monitor: str
    part: str
    level: str
    rate_name: str
    rows: list[CategoryRow]
    status: str | None
    e_value: float | None = None
    min_share: float = MIN_SHARE
    notes: list[str] = field(default_factory=list)

    def as_rows(self) -> list[dict[str, Any]]:
        """The table as plain rows (for CSV and JSON)."""
        return [{"monitor": self.monitor, "part": self.part, "level": self.level, **asdict(row)} for row in self.rows]


Marginals = dict[str, dict[str, dict[str, dict[str, Any]]]]
"""An estimate's `marginals`: per variable of an intersectional group, per part, each value's hits and trials."""


def level_names(attributes: list[str], groups: list[str], marginals: Marginals | None = None) -> list[str]:
    """The levels an audit reports: each attribute (the spec's variable names: from the record's marginals, else the
    spec), then their intersection (one level where the group is one attribute)."""
    width = max((len(group.split(GROUP_JOIN)) for group in groups), default=1)
    if marginals and len(marginals) == width:
        attributes = _in_group_order(list(marginals), groups, marginals)
    names = attributes if len(attributes) == width else [f"attribute {index + 1}" for index in range(width)]
    return names if width == 1 else [*names, " × ".join(names)]


def _in_group_order(variables: list[str], groups: list[str], marginals: Marginals) -> list[str]:
    """The variables in the order their values stand in the intersections' names."""
    values = {variable: {value for cells in marginals[variable].values() for value in cells} for variable in variables}
    first = next((group.split(GROUP_JOIN) for group in groups), None)
    if first is None:
        return variables
    ordered = [next((variable for variable in variables if value in values[variable]), None) for value in first]
    return ordered if None not in ordered and len(set(ordered)) == len(variables) else variables  # type: ignore[return-value]


def part_tables(
    monitor: str,
    part: str,
    body: dict[str, Any],
    attributes: list[str],
    *,
    min_share: float = MIN_SHARE,
    rate_name: str | None = None,
    marginals: Marginals | None = None,
    measure: str = "gap",
) -> list[AuditTable]:
    """The tables of one part of a monitor's estimate: one per level. An attribute's table counts its own trials
    (the record's `marginals`); from records without them, it sums the intersections and says which it left out."""
    groups: dict[str, dict[str, Any]] = body.get("groups", {})
    levels = level_names(attributes, list(groups), marginals)
    e_value = math.exp(body["log_wealth"]) if body.get("log_wealth") is not None else None
    tables = []
    for index, level in enumerate(levels):
        intersection = len(levels) > 1 and index == len(levels) - 1
        own = (marginals or {}).get(level, {}).get(part) if not intersection and len(levels) > 1 else None
        proxied = body.get("groups_from") == "probabilities"
        if proxied:  # n: the expected members (Σ p), selected: the moment estimate's share of them
            counts = {group: (cell["trials"], None if cell.get("estimate") is None else round(cell["estimate"] * cell["trials"])) for group, cell in groups.items()}
            suppressed = 0
        elif own is not None:
            counts, suppressed = {value: (cell["trials"], cell["hits"]) for value, cell in own.items()}, 0
        else:
            counts, suppressed = _level_counts(groups, None if intersection or len(levels) == 1 else index)
        rows = _compared(counts, min_share, exact_test=not proxied)
        table = AuditTable(monitor, part, level, rate_name or part.replace("_", " "), rows, body.get("status"), e_value, min_share)
        if body.get("median") is not None:
            table.notes.append(f"scoring rate: the share of each category scoring above {body['median']:g}, the median score of every trial counted")
        if proxied:
            table.notes.append(
                "groups known only as probabilities: n is each group's expected number of trials (Σ p), selected its moment estimate's "
                f"share of them, no exact test; the estimates assume a {body.get('assumption', 'calibrated proxy')}"
            )
        if (intersection or len(levels) == 1) and body.get("pair"):
            table.notes.append(_verdict_pair(body, measure))
        if suppressed and not intersection and len(levels) > 1:
            table.notes.append(f"{suppressed} intersection(s) with fewer trials than publish.min_cell are suppressed and not in these sums")
        tables.append(table)
    return tables


def _level_counts(groups: dict[str, dict[str, Any]], attribute: int | None) -> tuple[dict[str, tuple[int | None, int | None]], int]:
    """Per category of the level, (trials, hits): the groups themselves, or summed by one attribute's value; and how many
    suppressed groups were left out of the sums."""
    counts: dict[str, tuple[int | None, int | None]] = {}
    suppressed = 0
    for name, cell in groups.items():
        trials, hits = cell.get("trials"), cell.get("hits")
        if attribute is None:
            counts[name] = (trials, hits)
            continue
        category = name.split(GROUP_JOIN)[attribute]
        if trials is None or hits is None:
            suppressed += 1
            counts.setdefault(category, (0, 0))
            continue
        before = counts.get(category, (0, 0))
        counts[category] = ((before[0] or 0) + trials, (before[1] or 0) + hits)
    return counts, suppressed


def _compared(counts: dict[str, tuple[int | None, int | None]], min_share: float, exact_test: bool = True) -> list[CategoryRow]:
    """The level's rows: shares of the level's trials, the small and suppressed set apart, the rest compared with the most
    selected (with Fisher's exact test where the counts are counts)."""
    total = sum(trials for trials, _ in counts.values() if trials)
    rows = []
    for category, (trials, hits) in sorted(counts.items()):
        if trials is None or hits is None:
            rows.append(CategoryRow(category, None, None, None, note=SUPPRESSED))
            continue
        share = trials / total if total else None
        row = CategoryRow(category, trials, hits, hits / trials if trials else None, share)
        if trials == 0 or share is None or share < min_share:
            row.note = UNDER_SHARE
        rows.append(row)
    compared = [row for row in rows if not row.note]
    if not compared:
        return rows
    top = max(compared, key=lambda row: (row.rate, row.n))
    top.note = REFERENCE
    for row in compared:
        row.impact_ratio = row.rate / top.rate if top.rate else None  # type: ignore[operator]
        if row is not top and exact_test:
            table = [[row.selected, row.n - row.selected], [top.selected, top.n - top.selected]]  # type: ignore[operator]
            row.p_value = float(fisher_exact(table, alternative="two-sided").pvalue)
    top.impact_ratio = 1.0 if top.rate else None
    return rows


def _verdict_pair(body: dict[str, Any], measure: str) -> str:
    """The pair the part's verdict names, and the ratio or gap it was judged on: the one the timeline figure draws."""
    high, low = body["pair"]
    value = body.get(measure)
    shown = "withheld: a cell is suppressed" if value is None else f"{value:.4f}"
    return (
        f"the verdict names {high} vs {low} ({measure.replace('_', ' ')} {shown}); the timeline draws this pair, while the "
        "impact ratios above compare each category with the most selected one"
    )
