"""`fairstream data get NAME…` and `fairstream data list`: the reference data sets, fetched and checked into the cache."""

from __future__ import annotations

from pathlib import Path

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.datasets import CATALOG, DataSet, cache_dir, locate
from fairstream.datasets.fetch import fetch
from fairstream.records.errors import UsageError


@click.group()
def data() -> None:
    """Fetch the reference data sets (COMPAS, Adult, German Credit) into a cache, checked by sha256."""


@data.command()
@click.argument("names", nargs=-1, required=True, type=click.Choice([*CATALOG, "all"]))
@click.option("--url", help="Fetch from this URL (a mirror of the one data set named) instead of its source; the sha256 check still applies.")
@click.option("--into", type=click.Path(file_okay=False, path_type=Path), help="Keep the files here (default: $FAIRSTREAM_DATA, else ~/.cache/fairstream/data).")
@reports_errors
def get(names: tuple[str, ...], url: str | None, into: Path | None) -> None:
    """Fetch NAMES (compas, german, adult or all) from their sources; a file is kept only when its sha256 is the known one."""
    chosen = list(CATALOG) if "all" in names else list(dict.fromkeys(names))
    if url and len(chosen) != 1:
        raise UsageError(f"--url names one file; {len(chosen)} data sets were asked for ({', '.join(chosen)})")
    folder = into or cache_dir()
    for name in chosen:
        _get(CATALOG[name], folder, url)


def _get(dataset: DataSet, folder: Path, url: str | None) -> None:
    """Fetch one data set with a progress bar, then say where it is."""
    with console.download_progress() as bar:
        task = bar.add_task(f"fetching {dataset.file}", total=None)
        path, fetched = fetch(dataset, folder, url, on_size=lambda total: bar.update(task, total=total), on_bytes=lambda n: bar.update(task, advance=n))
    said = f"fetched from {url or dataset.url}" if fetched else "already there"
    console.console.print(f"{dataset.name}: {path} ({said}; sha256 {dataset.sha256[:12]}… checked)", soft_wrap=True)


@data.command("list")
def list_() -> None:
    """Each data set: its file, where it is found (../shared/data, then the cache) and its source."""
    rows = [(name, data.file, str(locate(name) or "missing"), data.source) for name, data in CATALOG.items()]
    console.table("Reference data sets", ("name", "file", "found at", "source"), rows)
