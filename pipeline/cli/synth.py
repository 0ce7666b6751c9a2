"""`fairstream synth …`: generate decision streams."""

from __future__ import annotations

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.credit import CreditSettings, credit_events
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


@synth.command()
@click.option("--applicants", default=3000, show_default=True, type=click.IntRange(1), help="Number of applicants; each applies at one branch or both.")
@click.option("--approval-gap", default=0.15, show_default=True, type=PROBABILITY, help="How much less likely group b is approved than group a at the same score.")
@click.option("--delay-gap", default=4.0, show_default=True, type=click.FloatRange(0), help="Extra mean days group b waits for its final decision.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0), help="Seed of the random draws; the same seed gives the same stream.")
@click.option("--out", default="credit.jsonl", show_default=True, type=click.Path(dir_okay=False), help="JSON-lines file to write.")
@reports_errors
def credit(applicants: int, approval_gap: float, delay_gap: float, seed: int, out: str) -> None:
    """Write a seeded stream of credit applications, contacts and decisions per applicant and branch, as JSON lines.

    The stream is the input of specs/credit_applications.yaml; a summary line gives the events and applications.
    """
    events = credit_events(applicants, seed, CreditSettings(approval_gap=approval_gap, delay_gap=delay_gap))
    write_jsonl(out, events)
    applications = sum(1 for event in events if event["event"] == "APPLY" and event["amount"] > 0)
    console.console.print(f"wrote {len(events):,} events to {out}: {applications:,} applications of {applicants:,} applicants", soft_wrap=True)


@synth.command()
@click.option("--n", "n", default=20_000, show_default=True, type=click.IntRange(1), help="Number of applicants.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0), help="Seed of the random draws; the same seed gives the same stream.")
@click.option("--out", default="lending.jsonl", show_default=True, type=click.Path(dir_okay=False), help="JSON-lines file to write.")
@click.option(
    "--attributes",
    default=None,
    type=click.Path(dir_okay=False),
    help="Write the APPLICANT events (surname and ZIP code) to this file instead, apart from the decisions.",
)
@reports_errors
def lending(n: int, seed: int, out: str, attributes: str | None) -> None:
    """Write a seeded stream of loan applications without race: surnames and ZIP codes drawn from the Census tables so
    that BISG is calibrated, each decision depending on race alone (needs `pip install 'fairstream[bisg]'`).

    The stream is the input of specs/lending_bisg.yaml; a summary line gives each group's applicants and true approval rate.
    """
    from fairstream.connectors.synthetic.lending import lending_applications

    lending = lending_applications(n, seed)
    decisions = [event for event in lending.events if attributes is None or event["event"] == "DECISION"]
    write_jsonl(out, decisions)
    if attributes is not None:
        write_jsonl(attributes, [event for event in lending.events if event["event"] == "APPLICANT"])
    counts = ", ".join(f"{group} {lending.races.count(group):,} (approved {console.fmt(rate)})" for group, rate in lending.rates.items())
    where = out if attributes is None else f"{out} and {attributes}"
    console.console.print(f"wrote {n:,} applicants to {where}; the lender does not see their race: {counts}", soft_wrap=True)
