"""Estimators of per-group conditional rates (pure)."""

from pipeline.estimators.rate import Rate, map_estimate

__all__ = ["Rate", "map_estimate"]
