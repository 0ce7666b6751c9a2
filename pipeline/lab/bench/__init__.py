"""Benchmarks: each measures the pipeline against a reference in the same run and returns a dataclass."""
