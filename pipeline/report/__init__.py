"""Reports drawn from a run's output files."""
