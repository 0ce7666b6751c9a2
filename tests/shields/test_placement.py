"""Where a shield's flips go with uneven groups: the smaller group's first, with the even rule's push on the gap at
every energy (so its drift and limit are the even rule's), ζ itself at equal shares, and the same rule for the spread
shield's two extremes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairstream.shields.energy.placement import EVEN, Placement, placed

unit = st.floats(0, 1)


@given(zeta=unit, p_a=unit, p_b=unit, share=st.floats(0.01, 0.99), below=st.booleans())
def test_the_push_on_the_gap_is_the_even_rules(zeta, p_a, p_b, share, below):
    placement = Placement.of(share, (p_a, p_b))
    unfavoured_a, unfavoured_b = (1 - p_a, p_b) if below else (p_a, 1 - p_b)
    chance_a, chance_b = (placement.chance(zeta, below, first) for first in (True, False))
    assert 0 <= chance_a <= 1 and 0 <= chance_b <= 1
    assert unfavoured_a * chance_a + unfavoured_b * chance_b == pytest.approx(zeta * (unfavoured_a + unfavoured_b), abs=1e-12)


@given(zeta=unit, p_a=st.floats(0.01, 0.99), p_b=st.floats(0.01, 0.99), below=st.booleans())
def test_the_smaller_group_takes_the_flips_first(zeta, p_a, p_b, below):
    placement = Placement.of(0.2, (p_a, p_b))  # group a is the smaller
    unfavoured_a, unfavoured_b = (1 - p_a, p_b) if below else (p_a, 1 - p_b)
    chance_a, chance_b = placement.chance(zeta, below, True), placement.chance(zeta, below, False)
    assert chance_a >= zeta - 1e-12
    assert chance_b == 0 or chance_a == 1  # the larger group flips only once the smaller flips all it can
    assert placed(zeta, 0.2, unfavoured_a, 0.8, unfavoured_b) == pytest.approx(chance_a, abs=1e-12)
    assert placed(zeta, 0.8, unfavoured_b, 0.2, unfavoured_a) == pytest.approx(chance_b, abs=1e-12)


def test_equal_shares_or_unknown_rates_are_the_even_rule():
    assert Placement.of(0.5, (0.6, 0.3)) is EVEN and Placement.of(0.2, None) is EVEN
    assert EVEN.chance(0.37, True, True) == 0.37 and placed(0.37, 0.3, 0.2, 0.3, 0.9) == 0.37
