"""Generators of synthetic decision streams (seeded, reproducible)."""
