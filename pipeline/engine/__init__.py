"""The stream engine the dataflow runs on: bytewax 0.21.1 where it installs (Python 3.11 and 3.12), else the plain
engine of this room (one process, one worker, no recovery store), chosen in `api`."""
