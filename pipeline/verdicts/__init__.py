"""From per-group estimates to verdicts and alert records (pure)."""
