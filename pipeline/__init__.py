"""fairstream: a stream-processing monitor for algorithmic fairness."""

__version__ = "0.1.0"
