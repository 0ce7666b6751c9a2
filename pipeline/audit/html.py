"""The bias-audit report as one self-contained HTML page: styles inline, figures as inline PNG, nothing fetched."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from html import escape
from typing import Any

from fairstream import __version__
from fairstream.audit.report import MonitorAudit, RunAudit
from fairstream.audit.tables import REFERENCE, SUPPRESSED, UNDER_SHARE, AuditTable

STYLE = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2rem auto; max-width: 72rem; color: #1b1f24; padding: 0 1rem; }
h1 { font-size: 1.7rem; } h2 { margin-top: 2.5rem; border-bottom: 2px solid #d0d7de; } h3 { margin-top: 1.8rem; }
table { border-collapse: collapse; margin: .6rem 0 1rem; font-size: .92rem; }
th, td { border: 1px solid #d0d7de; padding: .3rem .6rem; text-align: right; }
th { background: #f6f8fa; } td:first-child, th:first-child, td.note, th.note { text-align: left; } td:first-child { white-space: nowrap; }
tr.aside td { color: #6e7781; } .low { background: #ffebe9; }
.badge { display: inline-block; padding: .1rem .5rem; border-radius: .8rem; color: white; font-size: .85rem; }
.violated { background: #cf222e; } .certified { background: #1a7f37; } .satisfied { background: #2da44e; } .inconclusive { background: #6e7781; }
.intact { color: #1a7f37; } .broken { color: #cf222e; font-weight: bold; }
pre { background: #f6f8fa; padding: .8rem; overflow-x: auto; font-size: .85rem; }
dl { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; } dt { font-weight: 600; }
img { max-width: 100%; border: 1px solid #d0d7de; }
"""


def render(run: RunAudit, figures: dict[str, bytes]) -> str:
    """The page: record integrity, then per monitor its tables, first detections, timeline and spec; dead letters last."""
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    names = ", ".join(audit.monitor for audit in run.monitors)
    body = [
        f"<h1>Bias audit: {escape(names)}</h1>",
        f"<p>Written {now} by fairstream {escape(__version__)} from the run's own records.</p>",
        _integrity(run),
        *(_monitor(audit, figures.get(audit.monitor)) for audit in run.monitors),
        _dead_letters(run),
    ]
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Bias audit: {escape(names)}</title>'
        f"<style>{STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def _integrity(run: RunAudit) -> str:
    check = run.chains
    if check.breaks:
        return f'<p class="broken">Record integrity: the hash chain is broken. {escape(check.breaks[0])} ({len(check.breaks)} break(s) in all).</p>'
    return f'<p class="intact">Record integrity: {escape(check.summary())}; every record matches its hash and follows the one before.</p>'


def _monitor(audit: MonitorAudit, figure: bytes | None) -> str:
    spec = audit.plan
    parts = [
        f"<h2>{escape(audit.monitor)}</h2>",
        "<dl>",
        _item("metric", audit.metric),
        _item("verdicts", audit.verdict),
        _item("data period", f"from the first decision, {audit.first_event}, to the evaluation of {audit.last_event}, by which the last trial counted had closed (event time)"),
        _item("closed trials", f"{audit.closed:,}"),
        _item("unknown category", f"{audit.unknown:,} trial(s) without a needed value (the group or the outcome)"),
        _item("spec sha256", audit.spec_sha256 or "not recorded"),
        _item("produced by", ", then ".join(f"fairstream {version}" for version in audit.produced_by) or "not recorded"),
        "</dl>",
    ]
    for part in dict.fromkeys(table.part for table in audit.tables):
        tables = [table for table in audit.tables if table.part == part]
        parts.append(f"<h3>{escape(part)} {_badge(tables[0].status)}{_e_value(tables[0])}</h3>")
        parts.extend(_table(table) for table in tables)
    parts.append(_first_detections(audit))
    if figure:
        parts.append(f'<h3>Timeline</h3><img alt="the gaps or ratios the verdicts rest on, over event time" src="data:image/png;base64,{base64.b64encode(figure).decode()}">')
    parts.append(_timeline(audit))
    if spec is not None:
        parts.append(f"<h3>Spec</h3><p>sha256 {escape(spec.sha256)}</p><pre>{escape(spec.text)}</pre>")
    else:
        parts.append("<h3>Spec</h3><p>The spec with this sha256 was not given (<code>--spec</code>), so its text is not shown.</p>")
    return "\n".join(parts)


def _item(term: str, value: str) -> str:
    return f"<dt>{escape(term)}</dt><dd>{escape(value)}</dd>"


def _badge(status: str | None) -> str:
    status = status or "inconclusive"
    return f'<span class="badge {escape(status)}">{escape(status)}</span>'


def _e_value(table: AuditTable) -> str:
    return f" <small>e-value {table.e_value:.3g} against the part being fair (anytime-valid)</small>" if table.e_value is not None else ""


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _table(table: AuditTable) -> str:
    head = (
        f"<h4>{escape(table.level)}</h4><table><tr><th>category</th><th>n</th><th>share</th><th>selected</th>"
        f"<th>{escape(table.rate_name)}</th><th>impact ratio</th><th>p-value (Fisher)</th><th class=\"note\">note</th></tr>"
    )
    notes = {
        REFERENCE: "most selected: the reference" if table.rate_name == "selection rate" else "highest rate: the reference",
        UNDER_SHARE: f"under {100 * table.min_share:g} % of trials: not compared",
        SUPPRESSED: "fewer trials than publish.min_cell",
    }
    rows = []
    for row in table.rows:
        aside = ' class="aside"' if row.note in (UNDER_SHARE, SUPPRESSED) else ""
        low = ' class="low"' if row.impact_ratio is not None and row.impact_ratio < 0.8 else ""
        n = "suppressed" if row.note == SUPPRESSED else f"{row.n:,}"
        rows.append(
            f"<tr{aside}><td>{escape(row.category)}</td><td>{n}</td><td>{_number(row.share and 100 * row.share, 1)}{'%' if row.share is not None else ''}</td>"
            f"<td>{'—' if row.selected is None else f'{row.selected:,}'}</td><td>{_number(row.rate)}</td>"
            f"<td{low}>{_number(row.impact_ratio)}</td><td>{_p(row.p_value)}</td><td class=\"note\">{escape(notes.get(row.note, row.note))}</td></tr>"
        )
    remarks = "".join(f"<p><small>{escape(note)}</small></p>" for note in table.notes)
    return head + "".join(rows) + "</table>" + remarks


def _first_detections(audit: MonitorAudit) -> str:
    first = audit.first_violations()
    if not first:
        return "<h3>First valid detection</h3><p>No part was found in violation.</p>"
    rows = "".join(
        f"<tr><td>{escape(part)}</td><td>{escape(record['event_time'])}</td><td>{escape(record.get('emitted_at') or '—')}</td></tr>"
        for part, record in first.items()
    )
    return f"<h3>First valid detection</h3><table><tr><th>part</th><th>event time</th><th>wall-clock time</th></tr>{rows}</table>"


def _timeline(audit: MonitorAudit) -> str:
    if not audit.timeline:
        return "<p>No verdict changed during the run.</p>"
    rows = "".join(_timeline_row(record) for record in audit.timeline)
    measure = escape(audit.timeline[0]["measure"].replace("_", " "))
    return (
        f"<table><tr><th>verdict</th><th>part</th><th>between</th><th>{measure}</th><th>event time</th><th>wall-clock time</th></tr>"
        f"{rows}</table>"
    )


def _timeline_row(record: dict[str, Any]) -> str:
    between = " vs ".join(record.get("pair") or []) or record.get("group") or ""
    return (
        f"<tr><td>{escape(record['type'].removeprefix('fairness.'))}</td><td>{escape(record['part'])}</td><td>{escape(between)}</td>"
        f"<td>{_number(record.get('value'))}</td><td>{escape(record['event_time'])}</td><td>{escape(record.get('emitted_at') or '—')}</td></tr>"
    )


def _dead_letters(run: RunAudit) -> str:
    if not run.dead_letters:
        return "<h2>Dead letters</h2><p>No record was rejected.</p>"
    rows = "".join(f"<tr><td>{escape(reason)}</td><td>{count:,}</td></tr>" for reason, count in sorted(run.dead_letters.items()))
    return f"<h2>Dead letters</h2><table><tr><th>reason</th><th>records</th></tr>{rows}</table>"
