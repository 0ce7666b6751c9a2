"""Draw a run's estimates and alerts as one PNG: each group's rate over event time above the gap between groups."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from fairstream.language.metric import tests_ratio
from fairstream.records.envelope import CHANGED, RECOVERED, VIOLATION
from fairstream.records.errors import InputError
from fairstream.records.segments import segments_of
from fairstream.report.windows_plot import draw_windows

MAX_PARTS = 8
COLUMNS = 4
SIZE = (16, 9)
DPI = 100

NO_ESTIMATES = "no estimates in {dir}; run `fairstream run SPEC --input FILE --out DIR` first"
SEVERAL_MONITORS = "{dir} holds the estimates of several monitors ({monitors}): choose one with --monitor"
UNKNOWN_MONITOR = "no monitor {monitor!r} in {dir}; its monitors: {monitors}"
NOT_JSON = "{path}:{line}: not a JSON record; was it written by `fairstream run`?"
UNKNOWN_GROUP = "unknown group {group!r} in {path}; known groups: {known}"

GAP_COLOR = "black"
VIOLATION_COLOR = "tab:red"
RECOVERY_COLOR = "tab:green"
CERTIFIED_COLOR = "tab:blue"
CHANGE_COLOR = "tab:purple"


@dataclass(frozen=True)
class PartSeries:
    """One part of the metric over event time: each group's estimate (NaN where undefined), the gap and the verdict."""

    name: str
    times: list[datetime]
    estimates: dict[str, list[float]]
    trials: dict[str, int | None]
    """Each group's trials at the last evaluation that published its cell; None where none did (always too small)."""
    gaps: list[float]
    """Per evaluation, the gap max − min; for a ratio metric (disparate impact), the ratio min / max its threshold bounds."""
    violated: list[bool]
    threshold: float
    intervals: list[tuple[float, float]]
    ratio: bool = False
    certificates: dict[str, list[float]] | None = None
    """A delayed-impact constraint: per group, the upper bound on g (τ − mean, or mean − τ); at most 0 is certified."""
    raw: bool = False
    """Whether the rates and gap drawn are the raw ones (the points confident intervals are for), not the MAP estimates."""
    certified: list[bool] | None = None
    """Per evaluation, whether the part's status was `certified` (None for records without a status)."""
    bands: dict[str, tuple[list[float], list[float]]] | None = None
    """Per group, the lower and upper ends of its interval (confident) or confidence sequence (anytime), where published."""

    @property
    def final_gap(self) -> float:
        """The last evaluation's gap; minus infinity while it is undefined, so such parts sort last."""
        return -math.inf if math.isnan(self.gaps[-1]) else self.gaps[-1]


def plot_run(out_dir: Path, png_path: Path | None = None, *, groups: list[str] | None = None, monitor: str | None = None) -> Path:
    """Read `estimates.jsonl` and `alerts.jsonl` in `out_dir`, draw them and write a 1600×900 PNG (`out_dir/fairness.png`,
    or `fairness-<monitor>.png` for one `monitor` of a run of several)."""
    out_dir = Path(out_dir)
    estimates = run_records(out_dir, "estimates.jsonl")
    if not estimates:
        raise InputError(NO_ESTIMATES.format(dir=out_dir))
    monitors = list(dict.fromkeys(record["monitor"] for record in estimates))
    if monitor is None and len(monitors) > 1:
        raise InputError(SEVERAL_MONITORS.format(dir=out_dir, monitors=", ".join(monitors)))
    if monitor is not None and monitor not in monitors:
        raise InputError(UNKNOWN_MONITOR.format(monitor=monitor, dir=out_dir, monitors=", ".join(monitors)))
    chosen = monitor or monitors[0]
    estimates = [record for record in estimates if record["monitor"] == chosen]
    alerts = [record for record in run_records(out_dir, "alerts.jsonl") if record.get("monitor") == chosen]
    series = part_series(estimates)
    if groups:
        known = sorted({g for part in series for g in part.estimates})
        for group in groups:
            if group not in known:
                raise InputError(UNKNOWN_GROUP.format(group=group, path=out_dir / "estimates.jsonl", known=", ".join(known)))
    shown = largest_final_gaps(series, MAX_PARTS)
    figure = draw(
        shown, alerts_by_part(alerts), title=figure_title(estimates[-1], len(shown), len(series)), groups=groups,
        certifies=estimates[-1].get("verdict", "point") not in ("point", "change"),
    )  # fmt: skip
    png_path = Path(png_path) if png_path else out_dir / ("fairness.png" if len(monitors) == 1 else f"fairness-{chosen}.png")
    png_path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure).print_png(png_path)
    windows_png = windows_png_of(png_path)
    if draw_windows(estimates, alerts, moment_of, f"{chosen}: windows over raw events", windows_png) is None:
        windows_png.unlink(missing_ok=True)  # a figure of an earlier run would speak of other windows
    return png_path


def windows_png_of(png_path: Path) -> Path:
    """Where the figure of the windows over raw events goes beside the fairness figure (`fairness-windows.png`)."""
    return png_path.with_name(f"{png_path.stem}-windows.png")


def run_records(out_dir: Path, name: str) -> list[dict[str, Any]]:
    """The records of a run's output file `name`: its rotated segments still kept, oldest first, then the live file."""
    return [record for _number, path in segments_of(out_dir, name) for record in read_records(path)] + read_records(out_dir / name)


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file; none when the file does not exist."""
    if not path.is_file():
        return []
    records = []
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                records.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                raise InputError(NOT_JSON.format(path=path, line=number)) from None
    return records


def part_series(estimates: list[dict[str, Any]]) -> list[PartSeries]:
    """Each part's history, in order of first appearance."""
    history: dict[str, list[tuple[Any, dict[str, Any]]]] = {}
    for record in estimates:
        moment = moment_of(record)
        for name, body in record["parts"].items():
            history.setdefault(name, []).append((moment, body))
    ratio = bool(estimates) and tests_ratio(estimates[-1]["metric"])
    return [_series(name, rows, ratio) for name, rows in history.items()]


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def moment_of(record: dict[str, Any], field: str = "event_time") -> Any:
    """Where a record sits on the x axis: its event time, or for a plain table the rows read (its times are row numbers)."""
    if "row" in record and field == "event_time":
        return record["row"]
    moment = datetime.fromisoformat(record[field])
    return round((moment - EPOCH).total_seconds() * 1000) + 1 if "row" in record else moment


def _series(name: str, rows: list[tuple[Any, dict[str, Any]]], ratio: bool = False) -> PartSeries:
    bodies = [body for _, body in rows]
    groups = sorted({group for body in bodies for group in body["groups"]})

    def per_group(field: str) -> dict[str, list[float]]:
        return {g: [_number(body["groups"].get(g, {}).get(field)) for body in bodies] for g in groups}

    constraint = "constraint" in bodies[-1]  # no gap: each group's bound on g against 0
    named = next((body["interval_of"] for body in bodies if body.get("interval_of")), None)  # the gap an interval is for
    point = next((cell["interval_of"] for body in bodies for cell in body["groups"].values() if cell.get("interval_of")), "estimate")
    return PartSeries(
        name=name,
        times=[moment for moment, _ in rows],
        estimates=per_group(point),
        trials=_published_trials(bodies, groups),
        gaps=[math.nan if constraint else _number(body[named or ("ratio" if ratio else "gap")]) for body in bodies],
        violated=[bool(body["violated"]) for body in bodies],
        threshold=0.0 if constraint else bodies[-1]["threshold"],
        intervals=[tuple(body["interval"]) if body.get("interval") else (math.nan, math.nan) for body in bodies],
        ratio=ratio and not constraint,
        certificates=per_group("g_upper") if constraint else None,
        raw=point == "rate",
        certified=[body.get("status") == "certified" for body in bodies] if any("status" in body for body in bodies) else None,
        bands=_group_bands(bodies, groups),
    )


def _group_bands(bodies: list[dict[str, Any]], groups: list[str]) -> dict[str, tuple[list[float], list[float]]] | None:
    """Each group's interval ends over the evaluations (NaN where none was published); None when no cell has one."""
    if not any("interval" in cell for body in bodies for cell in body["groups"].values()):
        return None
    ends = {g: [(body["groups"].get(g) or {}).get("interval") or (None, None) for body in bodies] for g in groups}
    return {g: ([_number(low) for low, _ in pairs], [_number(high) for _, high in pairs]) for g, pairs in ends.items()}


def _published_trials(bodies: list[dict[str, Any]], groups: list[str]) -> dict[str, int | None]:
    """Each group's trials at the last evaluation that published them (a window may empty, or shrink below the
    publishing floor, by the end of the input)."""
    trials: dict[str, int | None] = dict.fromkeys(groups)
    for body in bodies:
        for group, cell in body["groups"].items():
            if cell["trials"] is not None:
                trials[group] = cell["trials"]
    return trials


def _number(value: float | None) -> float:
    return math.nan if value is None else value


def largest_final_gaps(series: list[PartSeries], limit: int) -> list[PartSeries]:
    """All parts when there are at most `limit`, else the `limit` with the largest final gap, largest first."""
    if len(series) <= limit:
        return series
    return sorted(series, key=lambda part: part.final_gap, reverse=True)[:limit]


def violated_spans(times: list[datetime], flags: list[bool]) -> list[tuple[datetime, datetime]]:
    """The stretches of event time a flag holds (in violation, certified): from an evaluation where it holds to the
    next one where it does not (or the last)."""
    spans = []
    start = None
    for moment, flag in zip(times, flags):
        if flag and start is None:
            start = moment
        elif not flag and start is not None:
            spans.append((start, moment))
            start = None
    if start is not None:
        spans.append((start, times[-1]))
    return spans


def alerts_by_part(alerts: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Violation, recovery and change alerts grouped by the part they concern, in file order."""
    found: dict[str, list[dict[str, Any]]] = {}
    for alert in alerts:
        if alert["type"] in (VIOLATION, RECOVERED, CHANGED):
            found.setdefault(alert["part"], []).append(alert)
    return found


def figure_title(last: dict[str, Any], shown: int, total: int) -> str:
    """The figure title: monitor, metric and estimator, and how many parts are left out."""
    verdict = f"{last['verdict']} verdicts, " if last.get("verdict") else ""
    level = f"α = {last['alpha']:g} over the monitor, " if last.get("alpha") is not None and last.get("family") == "monitor" else ""
    text = f"{last['monitor']}: {last['metric']} ({verdict}{level}MAP prior {last['prior']}, κ = {last['confidence']:g}; {last['trials']['closed']} closed trials)"
    if shown < total:
        text += f"\n{shown} of {total} parts, those with the largest final gap"
    return text


def draw(
    series: list[PartSeries], alerts: dict[str, list[dict[str, Any]]], *, title: str, groups: list[str] | None = None, certifies: bool = False
) -> Figure:
    """One column per part (four across, then another band): estimates by group on top; gap, threshold, violations and alerts below;
    with `certifies` (confident and anytime verdicts), the certified stretches too."""
    figure = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
    columns = min(len(series), COLUMNS)
    bands = math.ceil(len(series) / columns)
    grid = figure.add_gridspec(2 * bands, columns, height_ratios=[3, 2] * bands)
    colors = _colors(sorted({g for part in series for g in part.estimates}))
    for index, part in enumerate(series):
        band, column = divmod(index, columns)
        top = figure.add_subplot(grid[2 * band, column])
        bottom = figure.add_subplot(grid[2 * band + 1, column], sharex=top)
        _draw_estimates(top, part, colors, groups, legend_columns=3 if columns <= 2 else 2)
        _draw_gap(bottom, part, alerts.get(part.name, []), colors)
        if column == 0:
            top.set_ylabel("raw rate" if part.raw else "estimate")
        if column == 0 or part.certificates is not None:
            measure = "bound on g (≤ 0: certified)" if part.certificates is not None else "ratio (min / max)" if part.ratio else "gap (max − min)"
            bottom.set_ylabel(f"raw {measure}" if part.raw and part.certificates is None else measure)
    figure.suptitle(title, fontsize=14)
    figure.legend(
        handles=_key(
            any(part.ratio for part in series), any(part.raw for part in series), certifies,
            any(alert["type"] == CHANGED for part_alerts in alerts.values() for alert in part_alerts),
        ),
        loc="outside lower center", ncol=4 if certifies else 6, frameon=False, fontsize=11,
    )  # fmt: skip
    return figure


def _colors(groups: list[str]) -> dict[str, Any]:
    palette = colormaps["tab10" if len(groups) <= 10 else "tab20"]
    return {group: palette(index % palette.N) for index, group in enumerate(groups)}


def _label(group: str, trials: int | None) -> str:
    return f"{group} (n={trials})" if trials is not None else f"{group} (n suppressed)"


def _draw_estimates(ax: Axes, part: PartSeries, colors: dict[str, Any], groups: list[str] | None, *, legend_columns: int) -> None:
    """Lines by group; the legend, titled with the part, sits above the axes so it never hides a line."""
    shown = [group for group in part.estimates if not groups or group in groups]
    for group in shown if part.bands else []:
        ax.fill_between(part.times, *part.bands[group], color=colors[group], alpha=0.15, linewidth=0)  # type: ignore[index]
    lines = [ax.plot(part.times, part.estimates[group], color=colors[group], linewidth=1.5, label=_label(group, part.trials[group]))[0] for group in shown]
    values = [value for group in shown for value in part.estimates[group] if not math.isnan(value)]
    if part.bands and values:  # a band wide at the start must not flatten the lines
        low, high = min(values), max(values)
        pad = max(0.1 * max(abs(low), abs(high), 1e-9), 0.25 * (high - low))
        rates = 0 <= low and high <= 1
        ax.set_ylim(max(0.0, low - pad) if rates else low - pad, min(1.0, high + pad) if rates else high + pad)
    ax.tick_params(labelbottom=False)
    ax.grid(alpha=0.3)
    legend = ax.legend(
        handles=lines, title=part.name, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=legend_columns, fontsize=9, frameon=False
    )
    legend.get_title().set_fontsize(12)


def _draw_gap(ax: Axes, part: PartSeries, alerts: list[dict[str, Any]], colors: dict[str, Any]) -> None:
    lows, highs = [low for low, _ in part.intervals], [high for _, high in part.intervals]
    if not all(math.isnan(low) for low in lows):
        ax.fill_between(part.times, lows, highs, color=GAP_COLOR, alpha=0.18, linewidth=0)
    if part.certificates is not None:
        for group, bounds in part.certificates.items():
            ax.plot(part.times, bounds, color=colors[group], linewidth=1.3)
        highs = [bound for bounds in part.certificates.values() for bound in bounds]
    ax.plot(part.times, part.gaps, color=GAP_COLOR, linewidth=1.3)
    ax.axhline(part.threshold, color=VIOLATION_COLOR, linestyle="--", linewidth=1.2)
    for start, end in violated_spans(part.times, part.violated):
        ax.axvspan(start, end, color=VIOLATION_COLOR, alpha=0.12, linewidth=0)
    for start, end in violated_spans(part.times, part.certified or []):
        ax.axvspan(start, end, color=CERTIFIED_COLOR, alpha=0.15, linewidth=0)
    for alert in alerts:
        if alert["type"] == CHANGED:
            _mark_change(ax, alert)
            continue
        color = VIOLATION_COLOR if alert["type"] == VIOLATION else RECOVERY_COLOR
        ax.axvline(moment_of(alert), color=color, linestyle=":", linewidth=1.3)
    first = next((alert for alert in alerts if alert["type"] == VIOLATION), None)
    if first is not None:
        _label_first_violation(ax, part, first)
    shown = [value for value in part.gaps + highs if not math.isnan(value)] + [part.threshold]
    if part.certificates is not None:  # bounds on g fall below 0 where certified
        low, high = min(shown), max(shown)
        ax.set_ylim(low - 0.1 * (high - low or 1), high + 0.3 * (high - low or 1))
    else:  # headroom for the label of the first violation; an interval wide at the start must not flatten the rest
        measured = [value for value in part.gaps if not math.isnan(value)]
        typical = max(part.threshold, float(np.percentile(measured, 75)) if measured else 0.0)
        ax.set_ylim(0, min(max(shown), 2 * typical) * 1.3)
    ax.grid(alpha=0.3)
    if isinstance(part.times[0], int):  # a plain table: rows read, not dates
        ax.set_xlabel("rows read")
        return
    locator = AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))


def _mark_change(ax: Axes, alert: dict[str, Any]) -> None:
    """A change point: a solid line at `changed_at`, labelled with the pair and the gaps before and after."""
    moment = moment_of(alert, "changed_at")
    ax.axvline(moment, color=CHANGE_COLOR, linewidth=1.6)
    first, second = alert["pair"]
    ax.annotate(
        f"{first} − {second}: {alert['gap_before']:.2f} → {alert['gap_after']:.2f}",
        (moment, 1.0), xycoords=("data", "axes fraction"), xytext=(4, -4), textcoords="offset points",
        va="top", fontsize=9, color=CHANGE_COLOR, bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.85},
    )  # fmt: skip


def _label_first_violation(ax: Axes, part: PartSeries, alert: dict[str, Any]) -> None:
    moment = moment_of(alert)
    rows = isinstance(moment, int)
    span = (part.times[-1] - part.times[0]) if rows else (part.times[-1] - part.times[0]).total_seconds()
    right_half = ((moment - part.times[0]) if rows else (moment - part.times[0]).total_seconds()) / (span or 1.0) > 0.6
    text = f"{alert['group']} not certified" if "group" in alert else "{} vs {}".format(*alert["pair"])
    ax.annotate(
        f"{f'row {moment:,}' if rows else f'{moment:%Y-%m-%d}'}: {text}",
        xy=(moment, 1),
        xycoords=("data", "axes fraction"),
        xytext=(-6 if right_half else 6, -6),
        textcoords="offset points",
        ha="right" if right_half else "left",
        va="top",
        fontsize=9,
        color=VIOLATION_COLOR,
        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.85},
    )


def _key(ratio: bool, raw: bool = False, certifies: bool = False, changes: bool = False) -> list[Any]:
    measure = ("raw " if raw else "") + ("ratio" if ratio else "gap")
    return [
        Line2D([], [], color=GAP_COLOR, linewidth=1.3, label=f"{measure} between groups"),
        Patch(color=GAP_COLOR, alpha=0.18, label=f"interval of the {measure}"),
        Line2D([], [], color=VIOLATION_COLOR, linestyle="--", label="threshold"),
        Patch(color=VIOLATION_COLOR, alpha=0.12, label="violated"),
        *([Patch(color=CERTIFIED_COLOR, alpha=0.15, label="certified (unshaded: inconclusive)")] if certifies else []),
        Line2D([], [], color=VIOLATION_COLOR, linestyle=":", label="violation alert"),
        Line2D([], [], color=RECOVERY_COLOR, linestyle=":", label="recovery alert"),
        *([Line2D([], [], color=CHANGE_COLOR, linewidth=1.6, label="change point")] if changes else []),
    ]
