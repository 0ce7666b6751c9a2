"""`fairstream synth …`: generate decision streams."""

from __future__ import annotations

import click

from fairstream.cli import console
from fairstream.cli.errors import reports_errors
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.hiring import count_by_gender, hiring_decisions

PROBABILITY = click.FloatRange(0, 1)


@click.group()
def synth() -> None:
    """Generate synthetic decision streams."""


@synth.command()
@click.option("--n", "n", required=True, type=click.IntRange(1), help="Number of decisions (applicants).")
@click.option("--p-male", required=True, type=PROBABILITY, help="Probability that a male applicant is hired.")
@click.option("--p-female", required=True, type=PROBABILITY, help="Probability that a female applicant is hired.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0), help="Seed of the random draws; the same seed gives the same stream.")
@click.option("--out", default="hiring.jsonl", show_default=True, type=click.Path(dir_okay=False), help="JSON-lines file to write.")
@reports_errors
def hiring(n: int, p_male: float, p_female: float, seed: int, out: str) -> None:
    """Write a seeded stream of hiring decisions, one a minute, as JSON lines.

    The stream is the input of specs/hiring_demographic_parity.yaml; a summary line gives the
    applicants and hire rate per gender.
    """
    decisions = hiring_decisions(n, p_male, p_female, seed)
    write_jsonl(out, decisions)
    counts = ", ".join(f"{c.gender} {c.applicants} (hire rate {console.fmt(c.hire_rate)})" for c in count_by_gender(decisions))
    console.console.print(f"wrote {n} decisions to {out}: {counts}", soft_wrap=True)
