# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Steps of many two-group shield streams in C: `GroupShield.decide`'s rule with a monotone energy, the arithmetic of
`group_simulation`'s numpy steps in the same order, so a stream takes the same decisions either way."""

from libc.math cimport fmax, fmin, pow


cdef inline double _power(double x, double k) noexcept nogil:
    """x^k as numpy's power gives it: a square is x·x (numpy's fast path), other exponents C's pow."""
    return x * x if k == 2.0 else pow(x, k)


cdef inline double _ramp(double distance, double scale, double k) noexcept nogil:
    """min(1, (distance/scale)^k) for distance ≥ 0, and 0 below (`scale` never 0: an empty region's is 1)."""
    return fmin(1.0, _power(fmax(distance, 0.0) / scale, k))


cdef inline double _nonzero(double scale):
    """A region's width as `functions._ramp` divides by it: a zero width (an empty region) as 1."""
    return scale if scale != 0.0 else 1.0


cdef class MonotoneZeta:
    """ζ of a `MonotoneEnergy` member (its `_scalar`, in C)."""

    cdef double alpha, k, pivot, level, point, outer_weight, below_scale, above_scale, outer_scale, inner_scale, beyond_scale
    cdef int side

    def __init__(self, int side, double alpha, double k, double pivot, double level, double limit_point, double s_lo, double s_hi, double lo, double hi):
        cdef double far, edge
        self.side, self.alpha, self.k, self.level = side, alpha, k, level
        self.below_scale, self.above_scale = _nonzero(pivot - s_lo), _nonzero(s_hi - pivot)
        self.pivot = side * pivot if side != 0 else pivot
        self.point = side * limit_point
        far, edge = (s_lo, hi) if side == 1 else (-s_hi, -lo)
        self.outer_weight = alpha * (1 - level)
        self.outer_scale, self.inner_scale, self.beyond_scale = _nonzero(self.point - far), self.pivot - self.point, _nonzero(edge - self.pivot)

    cdef inline double value(self, double x) noexcept nogil:
        cdef double y, c = self.pivot
        if self.side == 0:
            return self.alpha * (_ramp(c - x, self.below_scale, self.k) if x < c else _ramp(x - c, self.above_scale, self.k))
        y = self.side * x
        if y <= self.point:
            return self.level + self.outer_weight * _ramp(self.point - y, self.outer_scale, self.k)
        if y <= c:
            return self.level * _power((c - y) / self.inner_scale, self.k)
        return self.alpha * _ramp(y - c, self.beyond_scale, self.k)

    def __call__(self, double x):
        return self.value(x)


cdef inline double _placed(double zeta, bint below, bint in_a, int smaller, double p_a, double p_b) noexcept nogil:
    """`Placement.chance`: ζ itself for the even rule (`smaller` < 0), else the smaller group's flips first (1: group a
    is the smaller, 0: group b), with numpy's arithmetic in the same order."""
    cdef double unfavoured_a, unfavoured_b, small, large, push, in_small, rest
    if smaller < 0:
        return zeta
    if below:
        unfavoured_a, unfavoured_b = 1 - p_a, p_b
    else:
        unfavoured_a, unfavoured_b = p_a, 1 - p_b
    if smaller == 1:
        small, large = unfavoured_a, unfavoured_b
    else:
        small, large = unfavoured_b, unfavoured_a
    push = zeta * (small + large)
    in_small = fmin(1.0, push / small) if small > 0 else 0.0
    if in_a == (smaller == 1):
        return in_small
    rest = push - small
    return fmin(1.0, rest / large) if rest > 0 and large > 0 else 0.0


def draw_bits(const double[:, :, ::1] draws, double share, double p_a, double p_b, unsigned char[:, ::1] bits, double[:, ::1] u):
    """A block of draws (steps × (arrival, raw draw, u) × streams) as bits (1: group a, 2: raw acceptance) and u."""
    cdef Py_ssize_t step, run
    cdef bint in_a
    with nogil:
        for step in range(draws.shape[0]):
            for run in range(draws.shape[2]):
                in_a = draws[step, 0, run] < share
                bits[step, run] = in_a | ((draws[step, 1, run] < (p_a if in_a else p_b)) << 1)
                u[step, run] = draws[step, 2, run]


def run_block(
    MonotoneZeta zeta,
    double pivot,
    int smaller,
    double p_a,
    double p_b,
    const unsigned char[:, ::1] bits,
    const double[:, ::1] u,
    long long start,
    long long burn_in,
    double s_lo,
    double s_hi,
    Py_ssize_t first_run,
    Py_ssize_t end_run,
    long long[:, ::1] counts,
    double[:, ::1] rates,
    long long[::1] first_violation,
    long long[::1] violations,
    long long[::1] flips,
    double[::1] gap,
    Py_ssize_t delay,
    long long[:, ::1] known_counts,
    double[:, ::1] known_rates,
    double[::1] known_gap,
    unsigned char[:, ::1] waiting,
):
    """Advance streams `first_run` to `end_run` by the block's steps (rows: steps from `start`, columns: streams), in
    place: `counts` holds per stream (seen a, accepted a, seen b, accepted b), `rates` the two groups' rates and `gap`
    D. An unfavoured decision is flipped with `_placed` of ζ (`smaller`, `p_a`, `p_b`: the problem's `Placement`).
    The shield decides by `known_gap`: D over the decisions whose label is known, all but the last `delay` (held in
    `waiting` as bits, group a and accepted, by step modulo `delay`); with no delay, D itself."""
    cdef Py_ssize_t step, run, group, slot
    cdef long long t
    cdef unsigned char drawn, held
    cdef bint in_a, decided, favoured, flip
    cdef double d
    with nogil:
        for step in range(bits.shape[0]):
            t = start + step
            slot = (t - 1) % delay if delay > 0 else 0
            for run in range(first_run, end_run):
                d = known_gap[run]
                drawn = bits[step, run]
                in_a = drawn & 1
                decided = drawn >> 1
                favoured = (d < pivot) == in_a  # below the pivot acceptance is favoured in group a, rejection in b
                flip = (decided != favoured) & (d != pivot) & (u[step, run] < _placed(zeta.value(d), d < pivot, in_a, smaller, p_a, p_b))
                decided ^= flip
                flips[run] += flip
                group = 0 if in_a else 1  # only the rate of the decision's group changes
                counts[run, 2 * group] += 1
                counts[run, 2 * group + 1] += decided
                rates[run, group] = <double>counts[run, 2 * group + 1] / <double>counts[run, 2 * group]
                d = rates[run, 0] - rates[run, 1]
                gap[run] = d
                if t >= burn_in and (d < s_lo or d > s_hi):
                    violations[run] += 1
                    if first_violation[run] == 0:
                        first_violation[run] = t
                if delay == 0:
                    known_gap[run] = d
                    continue
                if t > delay:  # the decision `delay` steps back has its label now
                    held = waiting[run, slot]
                    group = 0 if held & 1 else 1
                    known_counts[run, 2 * group] += 1
                    known_counts[run, 2 * group + 1] += held >> 1
                    known_rates[run, group] = <double>known_counts[run, 2 * group + 1] / <double>known_counts[run, 2 * group]
                    known_gap[run] = known_rates[run, 0] - known_rates[run, 1]
                waiting[run, slot] = in_a | (decided << 1)
