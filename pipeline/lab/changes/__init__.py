"""Change detection, measured: two groups' decisions whose gap holds still or moves at a known decision."""
