"""Output files kept for a set time: rotated into segments by wall-clock time, each segment removed after the retention
replaced by its statement (`fairstream.records.segments`), so the chains still verify across it."""
