"""The compiler: a checked spec (`language`) becomes a plan of trial layout, outcomes, verdict rules and a monitor
configuration, the floor above what it builds (trials, verdicts, the monitor, the shields)."""
