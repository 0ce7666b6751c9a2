import click


@click.command()
def throughput() -> None:
    """Not yet built."""
