"""Trials: the clock that makes event-time ticks, the buckets of open trials, their folds and outcomes."""
