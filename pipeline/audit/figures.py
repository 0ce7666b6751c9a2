"""The report's timeline figure: each part's gap over event time with its verdicts, drawn as `fairstream plot` draws it."""

from __future__ import annotations

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg

from fairstream.audit.report import MonitorAudit
from fairstream.report.plot import MAX_PARTS, alerts_by_part, draw, figure_title, largest_final_gaps, part_series


def timeline_png(audit: MonitorAudit) -> bytes:
    """A PNG of the monitor's estimates and verdicts over event time."""
    series = part_series(audit.estimates)
    shown = largest_final_gaps(series, MAX_PARTS)
    figure = draw(
        shown, alerts_by_part(audit.alerts), title=figure_title(audit.estimates[-1], len(shown), len(series)),
        certifies=audit.verdict != "point",
    )  # fmt: skip
    buffer = io.BytesIO()
    FigureCanvasAgg(figure).print_png(buffer)
    return buffer.getvalue()
