"""What the dataflow and the connectors build on, from one engine: bytewax where it is installed, else (or where
`FAIRSTREAM_ENGINE=plain`) the plain engine of this room. Both run the same steps over the same connectors."""

from __future__ import annotations

import os
from importlib.util import find_spec

ENGINE = os.environ.get("FAIRSTREAM_ENGINE") or ("bytewax" if find_spec("bytewax") is not None else "plain")
"""The engine of this process: `bytewax` or `plain`."""

INSTALLED = ("bytewax", "plain") if find_spec("bytewax") is not None else ("plain",)
"""The engines a job can be run on here (`FAIRSTREAM_ENGINE`)."""

if ENGINE == "bytewax":
    import bytewax.operators as op
    from bytewax.connectors.kafka import KafkaSinkMessage
    from bytewax.dataflow import Dataflow, Stream
    from bytewax.inputs import FixedPartitionedSource, Source, StatefulSourcePartition
    from bytewax.operators import StatefulLogic
    from bytewax.outputs import DynamicSink, FixedPartitionedSink, Sink, StatefulSinkPartition, StatelessSinkPartition
    from bytewax.recovery import RecoveryConfig
    from bytewax.testing import cluster_main, run_main
else:
    from fairstream.engine import operators as op
    from fairstream.engine.bases import (
        DynamicSink,
        FixedPartitionedSink,
        FixedPartitionedSource,
        KafkaSinkMessage,
        RecoveryConfig,
        Sink,
        Source,
        StatefulLogic,
        StatefulSinkPartition,
        StatefulSourcePartition,
        StatelessSinkPartition,
    )
    from fairstream.engine.graph import Dataflow, Stream
    from fairstream.engine.run import cluster_main, run_main

__all__ = [
    "ENGINE", "INSTALLED", "DynamicSink", "FixedPartitionedSink", "FixedPartitionedSource", "KafkaSinkMessage", "RecoveryConfig", "Sink", "Source",
    "StatefulLogic", "StatefulSinkPartition", "StatefulSourcePartition", "StatelessSinkPartition", "Dataflow", "Stream", "cluster_main", "op", "run_main",
]  # fmt: skip
