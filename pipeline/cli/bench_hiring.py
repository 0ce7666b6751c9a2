import click


@click.command()
def hiring() -> None:
    """Not yet built."""
