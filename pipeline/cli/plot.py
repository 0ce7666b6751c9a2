import click


@click.command()
@click.argument("out_dir")
def plot(out_dir: str) -> None:
    """Not yet built."""
