"""`fairstream shield`: synthesize an energy shield, simulate it, and compare the shields on real decision streams."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.cli.kafka_options import file_or_kafka, kafka_options
from fairstream.cli.lazy import LazyGroup
from fairstream.cli.shield.groups import group_request, print_check, print_synthesis
from fairstream.compiler.load import load_plan
from fairstream.connectors.kafka import reach
from fairstream.jobs import FORMATS
from fairstream.report.shields import write_simulation
from fairstream.runner import FileInput, FileOutput, Job, KafkaInput, KafkaOutput, execute, guess_format
from fairstream.shields import MonotoneFamily, Synthesis, Target, synthesize
from fairstream.shields.energy.simulation import energy_form, simulate
from fairstream.shields.runtime.configured import configure


class Interval(click.ParamType):
    """Two comma-separated numbers lo,hi with lo ≤ hi, e.g. 0.4,0.6."""

    name = "LO,HI"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> tuple[float, float]:
        if isinstance(value, tuple):
            return value
        try:
            low, high = (float(item) for item in str(value).split(","))
        except ValueError:
            self.fail(f"expected two comma-separated numbers such as 0.4,0.6; got {value!r}", param, ctx)
        if low > high:
            self.fail(f"expected lo ≤ hi; got {value!r}", param, ctx)
        return low, high


class Pair(click.ParamType):
    """Two comma-separated probabilities a,b in [0, 1], e.g. the raw rates 0.6,0.3 of two groups."""

    name = "A,B"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> tuple[float, float]:
        if isinstance(value, tuple):
            return value
        try:
            first, second = (float(item) for item in str(value).split(","))
        except ValueError:
            self.fail(f"expected two comma-separated probabilities such as 0.6,0.3; got {value!r}", param, ctx)
        if not (0 <= first <= 1 and 0 <= second <= 1):
            self.fail(f"expected probabilities in [0, 1]; got {value!r}", param, ctx)
        return first, second


ONE_GROUP_DEFAULTS = {"running": (0.4, 0.6), "limit": (0.45, 0.55), "burn_in": 50, "horizon": 1000}
TWO_GROUP_DEFAULTS = {"running": (-0.1, 0.1), "limit": (-0.05, 0.05), "burn_in": 100, "horizon": 2000}


def target_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options that define the problem and the synthesis shared by `synthesize` and `simulate`."""
    options = [
        click.option("--groups", default=1, show_default=True, type=click.IntRange(1, 2), help="1: the share of 1s of one decision maker; 2: the demographic-parity gap of two groups."),
        click.option("--p", "p", default=0.3, show_default=True, type=click.FloatRange(0, 1), help="One group: raw acceptance rate of the decision maker."),
        click.option("--rates", type=Pair(), help="Two groups: raw acceptance rates of group a and group b, e.g. 0.6,0.3."),
        click.option("--share", default=0.5, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True), help="Two groups: share of decisions about group a."),
        click.option("--spec", "spec_path", type=click.Path(dir_okay=False), help="Two groups: take the problem from this spec's shield: section (rates, share, targets, λ, horizon, steepness)."),
        click.option("--running", type=Interval(), help="Running target S [default: 0.4,0.6; two groups -0.1,0.1]."),
        click.option("--limit", type=Interval(), help="Limit target L ⊆ S [default: 0.45,0.55; two groups -0.05,0.05]."),
        click.option("--burn-in", type=click.IntRange(1), help="Burn-in τ: S holds from t = τ [default: 50; two groups 100]."),
        click.option("--horizon", type=click.IntRange(1), help="Horizon T of the violation measure [default: 1000; two groups 2000]."),
        click.option("--lambda", "lam", default=0.05, show_default=True, type=float, help="Bound λ on the violation measure (one group over [τ, ∞), two groups over [τ, T])."),
        click.option("--measure", default="probability", show_default=True, type=click.Choice(["probability", "expected"]), help="P(some violation) or E(number of violations)."),
        click.option("--settle-margin", default=0.01, show_default=True, type=click.FloatRange(0, 1, max_open=True), help="Place the limit point this far inside L, so finite streams end inside L (0: on its edge)."),
        click.option("--streams", default=4000, show_default=True, type=click.IntRange(100), help="Two groups, T > 100: simulated streams behind the bound."),
        click.option("--confidence", default=0.99, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True), help="Two groups, T > 100: joint confidence of the simulated bounds."),
    ]  # fmt: skip
    for option in reversed(options):
        command = option(command)
    return command


def _synthesize(
    p: float, running: tuple[float, float], limit: tuple[float, float], burn_in: int, horizon: int, lam: float, measure: str, settle_margin: float
) -> Synthesis:
    return synthesize(MonotoneFamily(p, Target(burn_in, running, limit).settled(settle_margin)), lam, horizon, measure=measure)


def _one_group(options: dict[str, Any]) -> dict[str, Any]:
    """The one-group options with their defaults filled in."""
    chosen = {name: options[name] if options[name] is not None else default for name, default in ONE_GROUP_DEFAULTS.items()}
    return {"p": options["p"], "lam": options["lam"], "measure": options["measure"], "settle_margin": options["settle_margin"], **chosen}


@click.group(
    cls=LazyGroup,
    lazy={
        "serve": ("fairstream.cli.shield.serve:serve_command", "Serve the spec's shield over HTTP: POST a decision to /decisions, get the shielded decision back; records as shield run writes them."),
        "compare": ("fairstream.lab.cli.shield_compare:compare_command", "Run classifier-recommended decisions through every shield and report demographic parity, utility loss and how often fairness holds."),
        "tables": ("fairstream.lab.cli.shield_tables:tables_command", "The fairness-shield paper's Tables 2 and 3 regenerated in its setup (five classifiers, periods of 50, κ 0.05–0.2), beside its numbers."),
        "experiments": ("fairstream.lab.cli.shield_experiments:experiments", "The energy-shield paper's Figs. 1–4 and Table 1: energy functions vs idle and deterministic shields, two groups with the raw gap told, estimated and changing, the horizon vs the tail bound, naive and periodic baselines, and Static-Fair and Dynamic on real data."),
    },
)
def shield() -> None:
    """Runtime fairness shields: synthesize energy functions, simulate them, compare shields on real data."""


@shield.command(name="synthesize")
@target_options
@reports_errors
def synthesize_command(**options: Any) -> None:
    """Pick the least steep member of the monotone family whose violation measure is at most λ.

    One group: exact dynamic programming over [τ, T] plus a tail bound after T. Two groups (--groups 2, or --spec):
    exact over both groups' counts for T ≤ 100, else Clopper–Pearson bounds from simulated streams, over [τ, T].
    """
    if options["groups"] == 2 or options["spec_path"]:
        print_synthesis(group_request(options, TWO_GROUP_DEFAULTS))
        return
    options = _one_group(options)
    result = _synthesize(**options)
    energy = result.energy
    name = "P(some F_t ∉ S, τ ≤ t ≤ T)" if result.measure == "probability" else "E(#t ∈ [τ, T] with F_t ∉ S)"
    console.console.print(
        f"energy: member α = {result.alpha:.4f} (k = {energy.k}, limit point x_L = {energy.limit_point:g}, pivot c = {energy.pivot:g})"
    )
    console.console.print(f"form: {energy_form(energy)}", soft_wrap=True)
    console.console.print(f"p = {options['p']:g}, S = {list(options['running'])}, L = {list(options['limit'])}, τ = {options['burn_in']}")
    console.table(
        "Guarantees",
        ["quantity", "value"],
        [
            [f"violation {name}, T = {result.horizon}", f"{result.violation:.6g}"],
            ["tail bound Σ_{t>T} P(F_t ∉ S)", f"{result.tail:.3g}"],
            [f"bound over [τ, ∞) (λ = {options['lam']:g})", f"{result.bound:.6g}"],
            ["expected interference |x* − p|", f"{result.interference:.6g}"],
            [f"mean interference over the first {result.horizon}", f"{result.horizon_interference:.6g}"],
        ],
        right=[1],
    )
    console.console.print(f"synthesis took {result.seconds:.3f} s ({result.iterations} bisection steps)")


@shield.command(name="simulate")
@target_options
@click.option("--runs", default=500, show_default=True, type=click.IntRange(1), help="Monte Carlo runs.")
@click.option("--steps", default=5000, show_default=True, type=click.IntRange(1), help="Decisions per run.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the raw decisions and the flip draws.")
@click.option(
    "--out", "out_dir", default="out/shields", show_default=True, type=click.Path(file_okay=False), help="Directory for simulation.png."
)
@reports_errors
def simulate_command(runs: int, steps: int, seed: int, out_dir: str, **options: Any) -> None:
    """Synthesize the energy function as `synthesize` does, then run the shielded process on raw Bernoulli decisions.

    Two groups: the check runs on streams independent of the synthesis's and sets their violation rate beside the bound.
    """
    if options["groups"] == 2 or options["spec_path"]:
        request = group_request(options, TWO_GROUP_DEFAULTS)
        print_check(request, print_synthesis(request), runs, steps, seed)
        return
    options = _one_group(options)
    result = _synthesize(**options)
    started = time.perf_counter()
    simulation = simulate(result.energy, options["p"], runs, steps, seed, limit=options["limit"])
    elapsed = time.perf_counter() - started
    png = write_simulation(simulation, Path(out_dir) / "simulation.png")
    burn_in = options["burn_in"]
    console.console.print(f"energy shield α = {result.alpha:.4f}, p = {options['p']:g}: {runs} runs × {steps} decisions (seed {seed})")
    console.table(
        "Monte Carlo",
        ["quantity", "value"],
        [
            [f"final mean F_{steps}", f"{simulation.final_mean:.4f}"],
            [f"runs ending inside L = {list(options['limit'])} (limit point {result.energy.limit_point:g})", f"{simulation.inside_limit:.4f}"],
            [f"runs ever violating S at t ≥ {burn_in}", f"{simulation.ever_violated:.4f}"],
            [
                "synthesized bound on that over [τ, ∞)" if result.measure == "probability" else "synthesized bound (expected violations)",
                f"{result.bound:.4f}",
            ],
            [f"mean violations per run, t ≤ {steps}", f"{simulation.violations[-1]:.4f}"],
            [f"mean interference over {steps} decisions", f"{simulation.interference[-1]:.4f}"],
            ["expected interference |x* − p|", f"{simulation.expected_interference:.4f}"],
        ],
        right=[1],
    )
    console.console.print(f"wrote {png}", markup=False, soft_wrap=True)
    console.console.print(f"simulated in {elapsed:.1f} s")


@shield.command(name="run")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--input", "input_path", type=click.Path(dir_okay=False), help="File of decision events (CSV or JSON lines).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Input file format; guessed from the file name when omitted.")
@click.option("--out", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False), help="With --input: decisions_shielded.jsonl, alerts.jsonl (interventions), dead_letters.jsonl.")
@kafka_options("Kafka bootstrap servers: read --topic, shielded decisions to <topic>.shielded, interventions to --alerts.")
@click.option("--topic", default="decisions", show_default=True)
@click.option("--alerts", "alerts_topic", default="fairness-alerts", show_default=True)
@click.option("--until-end", is_flag=True, help="With --bootstrap: stop at the end of the topic.")
@click.option("--replication-factor", type=click.IntRange(1), help="With --bootstrap: replicas of each output topic fairstream creates (default: the broker's default.replication.factor; 1 on brokers before Kafka 2.4).")
@click.option("--metrics-port", type=click.IntRange(1, 65535), help="Serve Prometheus metrics at /metrics, /healthz and /readyz on this port while the run lasts.")
@click.option("--metrics-host", default="127.0.0.1", show_default=True, help="Address the metrics endpoint listens on; it has no authentication: expose it (0.0.0.0) only behind a proxy that authenticates.")
@reports_errors
def run_command(
    spec: str,
    input_path: str | None,
    fmt: str | None,
    out_dir: str,
    bootstrap: str | None,
    kafka_config: str | None,
    topic: str,
    alerts_topic: str,
    until_end: bool,
    replication_factor: int | None,
    metrics_port: int | None,
    metrics_host: str,
) -> None:
    """Put SPEC's shield on the decision path: every decision shielded, every flip reported as an intervention."""
    kafka = file_or_kafka(input_path, bootstrap, kafka_config)
    shield_spec = load_plan(spec).spec.shield
    if kafka is not None:
        reach(kafka)  # a broker that refuses the login says so before the shield is synthesized, not after
    if shield_spec is not None:  # without one, the job below fails with the spec's own error
        console.console.print(configure(shield_spec).summary(shield_spec), soft_wrap=True, markup=False)
    if kafka is None:
        job = Job(spec=spec, input=FileInput(path=input_path, format=fmt or guess_format(input_path)), output=FileOutput(out_dir=out_dir), shield=True, metrics_port=metrics_port, metrics_host=metrics_host)  # type: ignore[arg-type]
    else:
        job = Job(
            spec=spec,
            input=KafkaInput(bootstrap=kafka.bootstrap, topics=[topic], tail=not until_end),
            output=KafkaOutput(bootstrap=kafka.bootstrap, alerts=alerts_topic, replication_factor=replication_factor),
            shield=True,
            kafka_config=kafka_config,
            metrics_port=metrics_port, metrics_host=metrics_host,
        )
    started = time.perf_counter()
    tally = execute(job, own_process=True)
    for line in tally.broken_assumptions():
        console.warning(line)
    if input_path is not None:
        console.console.print(f"shielded {tally.shielded:,} decisions, {tally.interventions:,} interventions, in {time.perf_counter() - started:.1f} s; wrote {out_dir}/decisions_shielded.jsonl and alerts.jsonl", soft_wrap=True)
    else:
        console.console.print(f"shielded {topic!r} into {topic + '.shielded'!r}; interventions on {alerts_topic!r}", soft_wrap=True)
