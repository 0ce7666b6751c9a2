"""`fairstream plot DIR`: draw a run's estimates and alerts as a PNG."""

from __future__ import annotations

from pathlib import Path

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.report.plot import plot_run, windows_png_of


@click.command()
@click.argument("out_dir", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="PNG to write; DIR/fairness.png when omitted.")
@click.option("--groups", "-g", multiple=True, metavar="GROUP", help="Draw only this group's line; repeat for several. Gaps still cover every group.")
@click.option("--monitor", "-m", help="With a run of several monitors: the monitor to draw (DIR/fairness-MONITOR.png).")
@reports_errors
def plot(out_dir: str, output: str | None, groups: tuple[str, ...], monitor: str | None) -> None:
    """Draw per-group estimates and the gap between groups over event time from the output DIR of `fairstream run`;
    where the spec has windows over raw events, a second PNG of them beside it."""
    path = plot_run(Path(out_dir), Path(output) if output else None, groups=list(groups) or None, monitor=monitor)
    console.console.print(f"wrote {path}", markup=False, soft_wrap=True)
    if windows_png_of(path).exists():
        console.console.print(f"wrote {windows_png_of(path)} (the spec's windows over raw events, triggers shaded where raised)", markup=False, soft_wrap=True)
