"""Group rates when each trial's group is known only as probabilities (a calibrated proxy such as BISG), by the method of
moments with a sandwich covariance (pure).

A trial carries p = P(group | proxy inputs), the conditioning indicator b (in the rate's set: a positive label for a
true positive rate, always for a selection rate) and the hit a (b and the predicted event). When the proxy is calibrated
and (a, b) depend on the proxy inputs only through the true group,

    E[p_g · y] = Σ_h E[p_g p_h] · r_h    for y = a and y = b,

so r = S₂⁻¹ Σ p·y, the regression of y on p without intercept, and each group's rate is θ_g = r_a,g / r_b,g. The
probability-weighted rate Σ p_g a / Σ p_g b is published beside it: it pulls every group towards the pooled rate.

Every number is a sum over trials of a fixed monomial of (p, a, b), so the counts merge over workers and windows as
plain sums do: p⊗p, p⊗p·a, p⊗p·b, p⊗p⊗p·a, p⊗p⊗p·b and p⊗p⊗p⊗p (symmetric entries only), then the bins of
`fairstream.estimators.proxy_bounds`, then, where some trials also carry their self-reported group y (one-hot), the sums
`fairstream.estimators.proxy_calibration` tests the proxy's calibration with, over those trials: y⊗p, p⊗p, the squares
of its statistics, and their number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations_with_replacement, permutations

import numpy as np

BINS = 5
"""Bins of the largest probability per most likely group, for the bounds that need calibration only."""
SINGULAR = 1e10
"""Condition number of Σ p⊗p above which the groups cannot be told apart (a group never likely, two always alike)."""


def _monomials(groups: int, order: int) -> np.ndarray:
    return np.array(list(combinations_with_replacement(range(groups), order)), dtype=np.intp).reshape(-1, order)


@dataclass(frozen=True)
class ProxyLayout:
    """Where each sum sits in a proxy cell's numbers, for `groups` in a fixed order."""

    groups: tuple[str, ...]
    bins: int = BINS
    calibration: bool = False
    """Whether some trials carry their self-reported group, and the sums that test the proxy's calibration follow."""

    @cached_property
    def pairs(self) -> np.ndarray:
        return _monomials(len(self.groups), 2)

    @cached_property
    def triples(self) -> np.ndarray:
        return _monomials(len(self.groups), 3)

    @cached_property
    def quadruples(self) -> np.ndarray:
        return _monomials(len(self.groups), 4)

    @cached_property
    def sections(self) -> dict[str, slice]:
        """The slices of the numbers: moments, then each bin's trials, probability sums, hits and members."""
        sizes = {
            "s2": len(self.pairs), "s2a": len(self.pairs), "s2b": len(self.pairs), "s3a": len(self.triples), "s3b": len(self.triples),
            "s4": len(self.quadruples), "bins": len(self.groups) * self.bins * (len(self.groups) + 3),
        }  # fmt: skip
        if self.calibration:
            k = len(self.groups)
            sizes |= {"c_yp": k * k, "c_pp": len(self.pairs), "c_x2": k + 1, "c_m": 1}
        out, start = {}, 0
        for name, size in sizes.items():
            out[name] = slice(start, start + size)
            start += size
        return out

    @property
    def size(self) -> int:
        return self.sections["c_m" if self.calibration else "bins"].stop

    def bin_of(self, p: np.ndarray) -> int:
        """The trial's bin: its most likely group, and how likely that is, cut into `bins` steps from 1/K to 1."""
        top = int(np.argmax(p))
        floor = 1 / len(self.groups)
        step = min(self.bins - 1, int((float(p[top]) - floor) / (1 - floor) * self.bins)) if len(self.groups) > 1 else 0
        return top * self.bins + max(step, 0)

    def numbers(self, p: np.ndarray, hit: bool, member: bool, truth: int = -1) -> tuple[float, ...]:
        """What one trial adds: its monomials, its bin's entry and, with `calibration`, its self-reported group's index
        (−1: none) in the calibration sums (the sums of a single row)."""
        return tuple(self.sums(p[None, :], np.array([hit]), np.array([member]), np.array([truth])).tolist())

    def sums(self, probabilities: np.ndarray, hits: np.ndarray, members: np.ndarray, truths: np.ndarray | None = None) -> np.ndarray:
        """What many trials add together (rows of probabilities, with their hits and memberships, and with
        `calibration` each one's self-reported group index or −1): the sum of their `numbers`, at once."""
        a, b = (hits & members).astype(float), members.astype(float)
        m2 = probabilities[:, self.pairs].prod(axis=2)
        m3 = probabilities[:, self.triples].prod(axis=2)
        width = len(self.groups) + 3
        block = np.zeros((self.bins * len(self.groups), width))
        rows = np.array([self.bin_of(p) for p in probabilities], dtype=np.intp)
        np.add.at(block, rows, np.column_stack([np.ones(len(a)), probabilities, a, b]))
        moments = [m2.sum(0), a @ m2, b @ m2, a @ m3, b @ m3, probabilities[:, self.quadruples].prod(axis=2).sum(0)]
        if not self.calibration:
            return np.concatenate([*moments, block.ravel()])
        truths = np.full(len(a), -1) if truths is None else np.asarray(truths)
        reported = truths >= 0
        p = probabilities[reported]
        y = np.eye(len(self.groups))[truths[reported]]
        statistics = calibration_statistics(y, p)
        calibration = [np.einsum("ig,ih->gh", y, p).ravel(), m2[reported].sum(0), (statistics**2).sum(0), [float(reported.sum())]]
        return np.concatenate([*moments, block.ravel(), *calibration])

    def tensor(self, numbers: np.ndarray, name: str) -> np.ndarray:
        """A symmetric moment tensor rebuilt from its sums."""
        order = {"s2": 2, "s2a": 2, "s2b": 2, "s3a": 3, "s3b": 3, "s4": 4, "c_pp": 2}[name]
        indices = {2: self.pairs, 3: self.triples, 4: self.quadruples}[order]
        k = len(self.groups)
        out = np.zeros((k,) * order)
        values = numbers[self.sections[name]]
        for index, value in zip(indices, values):
            for permutation in set(permutations(tuple(index))):
                out[permutation] = value
        return out


@dataclass(frozen=True)
class ProxyRates:
    """Each group's rate θ = r_a / r_b and their joint covariance, with the weighted rate and weight beside them."""

    groups: tuple[str, ...]
    rates: np.ndarray
    covariance: np.ndarray
    weighted: np.ndarray
    """Σ p_g a / Σ p_g b: the probability-weighted rate, biased toward the pooled rate."""
    weight: np.ndarray
    """Σ p_g b: the expected number of the group's trials in the rate's set."""
    trials: int

    def index(self, group: str) -> int:
        return self.groups.index(group)

    def standard_error(self, group: str) -> float:
        i = self.index(group)
        return math.sqrt(max(self.covariance[i, i], 0.0))

    def gap_error(self, high: str, low: str) -> float:
        """The standard error of θ_high − θ_low."""
        i, j = self.index(high), self.index(low)
        return math.sqrt(max(self.covariance[i, i] + self.covariance[j, j] - 2 * self.covariance[i, j], 0.0))

    def log_ratio_error(self, high: str, low: str) -> float:
        """The standard error of log θ_low − log θ_high (the delta method); infinite where a rate is not positive."""
        i, j = self.index(high), self.index(low)
        if self.rates[i] <= 0 or self.rates[j] <= 0:
            return math.inf
        c = self.covariance
        variance = c[j, j] / self.rates[j] ** 2 + c[i, i] / self.rates[i] ** 2 - 2 * c[i, j] / (self.rates[i] * self.rates[j])
        return math.sqrt(max(variance, 0.0))


def calibration_statistics(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Per trial (rows of one-hot self-reported groups y and probabilities p), what has mean 0 under calibration: the
    spread statistic Σ_g (y_g − p_g)(p_g − 1/K) (positive where the probabilities are shrunk towards uniform, negative
    where sharpened), then each group's residual y_g − p_g."""
    residual = y - p
    spread = (residual * (p - 1 / p.shape[1])).sum(axis=1)
    return np.column_stack([spread, residual])


def proxy_rates(layout: ProxyLayout, numbers: np.ndarray, trials: int, recalibration: np.ndarray | None = None) -> ProxyRates | None:
    """The moment estimates and their sandwich covariance from a cell's sums; None where Σ p⊗p cannot be inverted or a
    group has no member in the rate's set. With `recalibration` A, of the probabilities A·p instead of p (a linear map
    of p moves each moment tensor multilinearly, so the sums need not be taken again)."""
    k = len(layout.groups)
    if trials <= k:
        return None
    tensors = {name: layout.tensor(numbers, name) for name in ("s2", "s2a", "s2b", "s3a", "s3b", "s4")}
    if recalibration is not None:
        tensors = {name: _mapped(tensor, recalibration) for name, tensor in tensors.items()}
    s2, s2a, s2b, s3a, s3b, s4 = tensors.values()
    if not np.all(np.isfinite(s2)) or np.linalg.cond(s2) > SINGULAR:
        return None
    inverse = np.linalg.inv(s2)
    r_a, r_b = inverse @ s2a.sum(axis=1), inverse @ s2b.sum(axis=1)  # Σ p_g y = Σ_h Σ p_g p_h y, since Σ_h p_h = 1
    if np.any(r_b <= 0):
        return None
    meat_aa = s2a - 2 * s3a @ r_a + (s4 @ r_a) @ r_a
    meat_bb = s2b - 2 * s3b @ r_b + (s4 @ r_b) @ r_b
    meat_ab = s2a - s3a @ r_b - s3b @ r_a + (s4 @ r_a) @ r_b  # a·b = a: a hit is a member
    meat = np.block([[meat_aa, meat_ab], [meat_ab.T, meat_bb]])
    bread = np.kron(np.eye(2), inverse)
    joint = bread @ meat @ bread * trials / (trials - k)  # HC1's small-sample factor
    jacobian = np.hstack([np.diag(1 / r_b), np.diag(-r_a / r_b**2)])
    weight = s2b.sum(axis=1)
    hits = s2a.sum(axis=1)
    weighted = np.divide(hits, weight, out=np.full(k, np.nan), where=weight > 0)
    return ProxyRates(layout.groups, r_a / r_b, jacobian @ joint @ jacobian.T, weighted, weight, trials)


def _mapped(tensor: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """The sum of (A·p)⊗…⊗(A·p)·w given the sum of p⊗…⊗p·w: A applied along every axis."""
    for axis in range(tensor.ndim):
        tensor = np.moveaxis(np.tensordot(matrix, tensor, axes=([1], [axis])), 0, axis)
    return tensor
