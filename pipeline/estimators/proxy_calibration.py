"""Is the proxy calibrated where the truth is known: a test on the trials that carry their self-reported group, and a
linear recalibration fitted on them (pure).

Calibration means E[y | p] = p for the one-hot self-reported group y and the probability vector p. Then every residual
y_g − p_g, times any function of p, has mean 0 given p. The test reads K + 1 of them (`calibration_statistics`): the
spread Σ_g (y_g − p_g)(p_g − 1/K), which probabilities shrunk towards uniform push up and sharpened ones down, and
each group's residual y_g − p_g, which a group's probability set too low or high moves. Each gets a two-sided
asymptotic confidence sequence (`sequence_width`) at its share of the level, so the test may be read at every
evaluation as the sample grows; the proxy is found miscalibrated when one sequence leaves 0.

The recalibration is the least-squares map A = (Σ y⊗p)(Σ p⊗p)⁻¹, so that A·p estimates E[y | p] (its columns sum to
1, as p's entries do); the estimates recomputed from A·p are published beside the others when the test fails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fairstream.estimators.means import sequence_width
from fairstream.estimators.proxy import ProxyLayout

LEVEL = 0.01
"""The test's level: on a calibrated proxy, the probability that it ever finds miscalibration, over every evaluation."""
MIN_SAMPLE = 50
"""Self-reported trials before the test is read: its sequences are valid as the sample grows, not at a handful."""



@dataclass(frozen=True)
class Calibration:
    """What the self-reported trials say of the proxy: how many, whether it held (None while they are fewer than
    `MIN_SAMPLE`), the statistic furthest from 0 (its name, its mean and the half-width it was held to) and the
    recalibration map (None where it cannot be fitted)."""

    sample: int
    held: bool | None
    worst: tuple[str, float, float] | None
    recalibration: np.ndarray | None

    def record(self) -> dict[str, object]:
        """The part record's `calibration`."""
        body: dict[str, object] = {"sample": self.sample, "level": LEVEL, "held": self.held}
        if self.worst is not None:
            name, mean, half = self.worst
            body["worst"] = {"statistic": name, "mean": mean, "half_width": half}
        return body


def calibration(layout: ProxyLayout, numbers: np.ndarray) -> Calibration:
    """The test and the map from a cell's calibration sums."""
    k = len(layout.groups)
    sample = round(float(numbers[layout.sections["c_m"]][0]))
    if sample < MIN_SAMPLE:
        return Calibration(sample, None, None, None)
    yp = numbers[layout.sections["c_yp"]].reshape(k, k)
    pp = layout.tensor(numbers, "c_pp")
    residuals = yp.sum(axis=1) - pp.sum(axis=1)  # Σ y_g − Σ p_g, since Σ_h p_h = 1
    spread = float(np.trace(yp) - np.trace(pp) - residuals.sum() / k)
    means = np.concatenate([[spread], residuals]) / sample
    squares = numbers[layout.sections["c_x2"]]
    deviation = np.sqrt(np.maximum(squares / sample - means**2, 0.0))
    half = sequence_width(LEVEL / (k + 1), sample) * deviation / math.sqrt(sample)
    excess = np.abs(means) - half
    worst = int(np.argmax(excess))
    name = "spread" if worst == 0 else f"residual of {layout.groups[worst - 1]}"
    recalibration = yp @ np.linalg.inv(pp) if np.linalg.cond(pp) < 1e10 else None
    return Calibration(sample, bool(excess[worst] <= 0), (name, float(means[worst]), float(half[worst])), recalibration)
