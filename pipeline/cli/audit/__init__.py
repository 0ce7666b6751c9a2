"""The audit commands: `fairstream report` (the bias-audit report of a run) and `fairstream verify` (its hash chains)."""
