"""`fairstream synth …`: generate decision streams."""

import click


@click.group()
def synth() -> None:
    """Generate synthetic decision streams."""
