"""Audit-grade evidence: the bias-audit tables and report of a run, and the walk of its records' hash chains."""
