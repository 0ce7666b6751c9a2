"""`fairstream plot`: a real COMPAS run drawn to a 1600×900 PNG, one-line errors, and the pure helpers behind the figure."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from matplotlib.image import imread

from fairstream.cli import cli
from fairstream.report.plot import draw, figure_title, largest_final_gaps, part_series, violated_spans
from fairstream.runner import run_file

ENV = {"NO_COLOR": "1", "COLUMNS": "80"}


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), env=ENV)


@pytest.fixture(scope="module")
def compas_run(tmp_path_factory, compas_csv: Path, specs_dir: Path) -> Path:
    out = tmp_path_factory.mktemp("compas")
    run_file(specs_dir / "compas_equalized_odds.yaml", compas_csv, out)
    return out


def test_plot_writes_a_1600_by_900_png_into_the_run_directory(compas_run: Path):
    result = invoke("plot", str(compas_run))
    png = compas_run / "fairness.png"
    assert result.exit_code == 0, result.output
    assert result.output == f"wrote {png}\n"
    assert imread(png).shape[:2] == (900, 1600)


def test_plot_draws_chosen_groups_to_the_given_file(compas_run: Path, tmp_path: Path):
    png = tmp_path / "figures" / "two.png"
    result = invoke("plot", str(compas_run), "--output", str(png), "--groups", "African-American", "-g", "Caucasian")
    assert result.exit_code == 0, result.output
    assert result.output == f"wrote {png}\n"
    assert imread(png).shape[:2] == (900, 1600)


def test_plot_rejects_an_unknown_group_naming_the_known_ones(compas_run: Path):
    result = invoke("plot", str(compas_run), "--groups", "Martian")
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: unknown group 'Martian' in {compas_run / 'estimates.jsonl'}; "
        "known groups: African-American, Asian, Caucasian, Hispanic, Native American, Other\n"
    )


@pytest.mark.parametrize("estimates", [None, b"", b"\n"])
def test_plot_without_estimates_says_how_to_make_them(tmp_path: Path, estimates: bytes | None):
    if estimates is not None:
        (tmp_path / "estimates.jsonl").write_bytes(estimates)
    result = invoke("plot", str(tmp_path))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"error: no estimates in {tmp_path}; run `fairstream run SPEC --input FILE --out DIR` first\n"
    assert not (tmp_path / "fairness.png").exists()


def test_violated_spans_run_from_a_violation_to_the_next_clear_evaluation_or_the_end():
    days = [datetime(2015, 1, d) for d in range(1, 8)]
    flags = [False, True, True, False, False, True, True]
    assert violated_spans(days, flags) == [(days[1], days[3]), (days[5], days[6])]
    assert violated_spans(days, [False] * 7) == []


def estimate(day: int, gaps: dict[str, float | None]) -> dict:
    """An estimate record whose parts have two groups `gap` apart (one group only when the gap is None)."""
    parts = {}
    for name, gap in gaps.items():
        groups = {"a": {"estimate": 0.5, "hits": 5, "trials": 10}}
        if gap is not None:
            groups["b"] = {"estimate": 0.5 - gap, "hits": 1, "trials": 10}
        defined = gap is not None
        parts[name] = {
            "groups": groups,
            "gap": gap,
            "pair": ["a", "b"] if defined else None,
            "threshold": 0.1,
            "violated": gap > 0.1 if defined else None,
        }
    moment = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=day)
    return {
        "monitor": "m",
        "type": "fairness.estimate",
        "event_time": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "metric": "conditional_statistical_parity",
        "prior": 0.5,
        "confidence": 10.0,
        "trials": {"closed": 20 * (day + 1), "incomplete": 0},
        "parts": parts,
    }


def test_many_strata_keep_the_eight_largest_final_gaps_and_say_so():
    names = [f"selection_rate[seminar={i}]" for i in range(10)]
    records = [estimate(0, {n: 0.0 for n in names}), estimate(1, {n: i / 100 for i, n in enumerate(names)} | {names[9]: None})]
    series = part_series(records)
    shown = largest_final_gaps(series, 8)
    assert [part.name for part in shown] == [names[i] for i in (8, 7, 6, 5, 4, 3, 2, 1)]
    text = figure_title(records[-1], len(shown), len(series))
    assert text == "m: conditional_statistical_parity (MAP prior 0.5, κ = 10; 40 closed trials)\n8 of 10 parts, those with the largest final gap"
    figure = draw(shown, {}, title=text)
    assert figure.get_suptitle() == text
    assert [ax.get_legend().get_title().get_text() for ax in figure.axes[::2]] == [part.name for part in shown]


def test_a_group_seen_late_is_undefined_before():
    first = estimate(0, {"selection_rate": None})
    second = estimate(1, {"selection_rate": 0.2})
    (part,) = part_series([first, second])
    assert part.estimates["a"] == [0.5, 0.5]
    assert math.isnan(part.estimates["b"][0]) and part.estimates["b"][1] == pytest.approx(0.3)
    assert part.trials == {"a": 10, "b": 10}
    assert part.violated == [False, True]


def test_a_ratio_metric_draws_the_ratio_its_threshold_bounds():
    """Disparate impact is judged on min / max against e.g. 0.8: the lower panel must show that ratio, not the gap."""
    from fairstream.report.plot import part_series

    body = {"groups": {"a": {"estimate": 0.6, "hits": 6, "trials": 10}, "b": {"estimate": 0.3, "hits": 3, "trials": 10}},
            "gap": 0.3, "ratio": 0.5, "pair": ["a", "b"], "threshold": 0.8, "violated": True, "clear": False}  # fmt: skip
    record = {"event_time": "2024-01-02T00:00:00Z", "parts": {"selection_rate": body}}
    [ratio] = part_series([{**record, "metric": "disparate_impact"}])
    [gap] = part_series([{**record, "metric": "demographic_parity"}])
    assert (ratio.ratio, ratio.gaps) == (True, [0.5]) and (gap.ratio, gap.gaps) == (False, [0.3])


def test_a_delayed_impact_constraint_draws_each_groups_bound_on_g_and_its_alert(tmp_path: Path):
    """A constraint part has no gap: the lower panel shows each group's upper bound on g against 0, and the figure is drawn."""
    cells = [
        {"a": {"estimate": 0.7, "trials": 40, "tau": 0.6, "bound": 0.65, "g_upper": -0.05, "certified": True},
         "b": {"estimate": 0.5, "trials": 40, "tau": 0.6, "bound": 0.45, "g_upper": 0.15, "certified": False}},
        {"a": {"estimate": 0.7, "trials": 80, "tau": 0.6, "bound": 0.67, "g_upper": -0.07, "certified": True},
         "b": {"estimate": 0.62, "trials": 80, "tau": 0.6, "bound": 0.61, "g_upper": -0.01, "certified": True}},
    ]  # fmt: skip
    constraint = {"direction": "at_least", "tau": 0.6, "baseline": None, "delta": 0.05, "bound": "student_t"}
    records = [
        {"monitor": "m", "metric": "delayed_impact", "verdict": "point", "prior": 0.5, "confidence": 0.0, "trials": {"closed": 80},
         "event_time": f"2024-01-0{day}T00:00:00Z",
         "parts": {"mean_outcome>=0.6": {"constraint": constraint, "groups": groups, "failing": [g for g, c in groups.items() if not c["certified"]],
                                         "violated": not all(c["certified"] for c in groups.values()), "clear": all(c["certified"] for c in groups.values())}}}
        for day, groups in ((1, cells[0]), (2, cells[1]))
    ]  # fmt: skip
    [series] = part_series(records)
    assert series.certificates == {"a": [-0.05, -0.07], "b": [0.15, -0.01]} and series.violated == [True, False]
    alert = {"type": "fairness.violation", "event_time": "2024-01-01T00:00:00Z", "part": "mean_outcome>=0.6", "group": "b"}
    draw([series], {"mean_outcome>=0.6": [alert]}, title=figure_title(records[-1], 1, 1)).savefig(tmp_path / "constraint.png")
    assert imread(tmp_path / "constraint.png").shape[:2] == (900, 1600)


def test_a_confident_run_shades_the_stretches_its_parts_were_certified(tmp_path: Path):
    """Statuses inconclusive, certified, certified, inconclusive: one certified stretch, drawn as a shaded span beside
    the violated ones, and the key names it."""
    bodies = [
        {"groups": {"a": {"estimate": 0.5, "rate": 0.5, "hits": 5, "trials": 10}, "b": {"estimate": 0.45, "rate": 0.45, "hits": 9, "trials": 20}},
         "gap": 0.05, "ratio": 0.9, "pair": ["a", "b"], "raw_gap": 0.05, "raw_ratio": 0.9, "threshold": 0.1, "violated": False, "clear": True,
         "interval": [-0.02, 0.08], "interval_of": "raw_gap", "status": status}
        for status in ("inconclusive", "certified", "certified", "inconclusive")
    ]  # fmt: skip
    records = [
        {"monitor": "m", "type": "fairness.estimate", "event_time": f"2024-01-0{day + 1}T00:00:00Z", "metric": "demographic_parity",
         "verdict": "confident", "alpha": 0.05, "family": "monitor", "prior": 0.5, "confidence": 0, "trials": {"closed": 30, "incomplete": 0},
         "parts": {"selection_rate": body}}
        for day, body in enumerate(bodies)
    ]  # fmt: skip
    (part,) = part_series(records)
    assert part.certified == [False, True, True, False]
    assert violated_spans(part.times, part.certified) == [(part.times[1], part.times[3])]
    figure = draw([part], {}, title="t", certifies=True)
    gap_axes = figure.axes[1]
    spans = [patch for patch in gap_axes.patches if patch.get_facecolor()[:3] == pytest.approx((0.12156862745098039, 0.4666666666666667, 0.7058823529411765))]
    assert len(spans) == 1
    assert "certified (unshaded: inconclusive)" in [text.get_text() for text in figure.legends[0].get_texts()]


def test_each_groups_published_interval_is_drawn_as_a_band_around_its_line():
    body = {"groups": {"a": {"estimate": 0.6, "rate": 0.6, "hits": 6, "trials": 10, "interval": [0.3, 0.85]},
                       "b": {"estimate": 0.3, "rate": 0.3, "hits": 3, "trials": 10}},
            "gap": 0.3, "ratio": 0.5, "pair": ["a", "b"], "threshold": 0.1, "violated": True, "clear": False}  # fmt: skip
    records = [{"event_time": f"2024-01-0{day}T00:00:00Z", "metric": "demographic_parity", "parts": {"selection_rate": body}} for day in (1, 2)]
    (part,) = part_series(records)
    assert part.bands["a"] == ([0.3, 0.3], [0.85, 0.85])
    assert all(math.isnan(value) for value in part.bands["b"][0])
    figure = draw([part], {}, title="t")
    assert len(figure.axes[0].collections) == 2  # one band per group; b's is empty
