"""fairstream: a stream-processing monitor for algorithmic fairness."""

__version__ = "0.1.0"


def __getattr__(name: str):
    """`fairstream.FairnessMonitor`, imported on first use so that the command line starts without the dataflow."""
    if name == "FairnessMonitor":
        from fairstream.api import FairnessMonitor

        return FairnessMonitor
    raise AttributeError(f"module 'fairstream' has no attribute {name!r}")
