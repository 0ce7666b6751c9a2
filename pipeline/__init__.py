"""fairstream: a stream-processing monitor for algorithmic fairness."""

__version__ = "0.1.0"


def __getattr__(name: str):
    """`fairstream.FairnessMonitor` and `fairstream.monitor_frame`, imported on first use so that the command line
    starts without the dataflow (and without pandas)."""
    if name == "FairnessMonitor":
        from fairstream.api import FairnessMonitor

        return FairnessMonitor
    if name == "monitor_frame":
        from fairstream.frames import monitor_frame

        return monitor_frame
    raise AttributeError(f"module 'fairstream' has no attribute {name!r}")
