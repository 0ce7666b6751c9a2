"""`fairstream dashboard [DIR]`: serve a live page of a run's estimates, alerts, shield and health."""

from __future__ import annotations

from typing import Any

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.cli.kafka_options import file_or_kafka, kafka_options
from fairstream.process.listening import listen


@click.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@kafka_options("Kafka bootstrap servers, HOST:PORT: follow the job's --alerts topic and its .estimates and .dlq topics.")
@click.option("--alerts", "alerts_topic", default="fairness-alerts", show_default=True, help="With a Kafka: the job's alert topic.")
@click.option("--metrics", "metrics_url", help="The job's Prometheus endpoint (run --metrics-port), e.g. http://127.0.0.1:9100/metrics: events read, open trials, watermark delay.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to serve on; the default is reachable from this machine only.")
@click.option("--port", default=8050, show_default=True, type=click.IntRange(1, 65535), help="Port to serve on.")
@click.option("--max-points", default=1500, show_default=True, type=click.IntRange(10), help="Evaluations drawn per series at most; longer runs are thinned evenly (violated periods stay exact).")
@reports_errors
def dashboard(
    directory: str | None, bootstrap: str | None, kafka_config: str | None, alerts_topic: str, metrics_url: str | None, host: str, port: int, max_points: int
) -> None:
    """Serve a live page of a run's estimates, alerts, shield and health.

    Give the output DIR of `fairstream run --out DIR` (followed as its files grow), or a Kafka (--bootstrap,
    --kafka-config or the environment) and the job's --alerts topic. The page updates itself as records arrive.
    """
    import uvicorn

    from fairstream.dashboard.app import Feed, create_app
    from fairstream.dashboard.sources import DirectorySource, KafkaSource

    kafka = file_or_kafka(directory, bootstrap, kafka_config, file_option="an output DIR")
    source = DirectorySource(directory) if kafka is None else KafkaSource(kafka, alerts_topic)
    console.show_errors("fairstream.dashboard")
    listener = listen(host, port)
    feed = Feed(source, metrics_url=metrics_url, max_points=max_points)
    app = create_app(feed)
    shown = f"[{host}]" if ":" in host else host
    console.console.print(f"dashboard of {source.describe()} at http://{shown}:{port}/ (Ctrl-C to stop)", soft_wrap=True, markup=False)

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            feed.stopping = True  # open pages' event streams end, so the server exits at once
            super().handle_exit(sig, frame)

    Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])
