"""The pipeline's health as the job's Prometheus endpoint tells it (`fairstream run --metrics-port`): events read, open
trials, how far each monitor's watermark is behind the wall clock, and the consumer's lag."""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

from prometheus_client.parser import text_string_to_metric_families


def scrape(url: str, timeout: float = 2.0) -> tuple[dict[str, Any] | None, str | None]:
    """The job's health from its metrics page, or None and the reason it could not be read."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - a URL the user gave
            text = response.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", None) or err
        return None, f"cannot read the job's metrics at {url}: {reason}"
    return health_of(text), None


def health_of(text: str) -> dict[str, Any]:
    """Events read, open trials and watermark delay per monitor, and the consumer lag, from Prometheus text.

    >>> health_of('fairstream_events_read_total{partition="0"} 7.0\\nfairstream_open_trials{monitor="m"} 3.0\\n')
    {'events_read': 7, 'open_trials': {'m': 3}, 'watermark_delay_seconds': {}, 'consumer_lag': 0}
    """
    health: dict[str, Any] = {"events_read": 0, "open_trials": {}, "watermark_delay_seconds": {}, "consumer_lag": 0}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "fairstream_events_read_total":
                health["events_read"] += int(sample.value)
            elif sample.name == "fairstream_open_trials":
                health["open_trials"][sample.labels["monitor"]] = int(sample.value)
            elif sample.name == "fairstream_watermark_delay_seconds":
                health["watermark_delay_seconds"][sample.labels["monitor"]] = round(sample.value, 1)
            elif sample.name == "fairstream_consumer_lag_messages":
                health["consumer_lag"] += int(sample.value)
    return health
