"""The bytewax wiring: the monitor's and the shield's dataflows, sources that do their partition's work where they
read, worker processes, and how a run stops on a signal."""
