"""`fairstream alerts --bootstrap HOST:PORT`: print the alerts on the alert topic, de-duplicated by id."""

from __future__ import annotations

import signal
from collections.abc import Iterable
from typing import Any

import click
import orjson

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.cli.kafka_options import kafka_options
from fairstream.connectors.alerts import subscribe
from fairstream.connectors.kafka_config import checked_connection


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def alert_row(record: dict[str, Any]) -> tuple[Any, ...]:
    """An alert as a row of the table: a trigger names itself where a part's alert names its part.

    >>> alert_row({"type": "fairness.trigger", "event_time": "2014-06-02T00:00:00Z", "monitor": "m", "trigger": "few", "state": "raised"})
    ('2014-06-02', 'trigger raised', 'm', 'few', '', None)
    """
    if "trigger" in record:
        return (record["event_time"][:10], f"trigger {record['state']}", record.get("monitor"), record["trigger"], "", None)
    kind = record["type"].removeprefix("fairness.")
    pair = " vs ".join(record.get("pair") or [])
    return (record["event_time"][:10], kind, record.get("monitor"), record.get("part", ""), pair, record.get("gap"))


ALERT_COLUMNS = ["event time", "alert", "monitor", "part or trigger", "pair", "gap"]


def print_alerts(records: Iterable[dict[str, Any]], *, as_json: bool, title: str = "Alerts") -> int:
    """Print alerts as JSON lines, or collect them into one table; return how many there were."""
    if as_json:
        count = 0
        for record in records:
            click.echo(orjson.dumps(record).decode())
            count += 1
        return count
    rows = [alert_row(record) for record in records]
    if rows:
        console.table(title, ALERT_COLUMNS, rows, right=(5,))
    else:
        console.console.print("no alerts")
    return len(rows)


@click.command()
@kafka_options("Kafka bootstrap servers, HOST:PORT.")
@click.option("--topic", default="fairness-alerts", show_default=True, help="Alert topic.")
@click.option("--follow", is_flag=True, help="Keep waiting for new alerts (Ctrl-C to stop).")
@click.option("--from-beginning", is_flag=True, help="Start at the oldest alert, not at the end (implied without --follow).")
@click.option("--json", "as_json", is_flag=True, help="One JSON record per line instead of a table.")
@reports_errors
def alerts(bootstrap: str | None, kafka_config: str | None, topic: str, follow: bool, from_beginning: bool, as_json: bool) -> None:
    """Print fairness alerts from the alert topic, each alert id once."""
    records = subscribe(checked_connection(bootstrap, kafka_config), topic, from_beginning=from_beginning or not follow, follow=follow)
    if follow:
        previous = signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM ends following as Ctrl-C does: exit 0, as `run` does
        try:
            for record in records:
                if as_json:
                    click.echo(orjson.dumps(record).decode())
                else:
                    console.console.print("  ".join(console.fmt(cell) for cell in alert_row(record)), soft_wrap=True)
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
        return
    print_alerts(records, as_json=as_json, title=f"Alerts on {topic}")
