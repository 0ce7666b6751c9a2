"""The record path: raw records parsed and validated into events or dead letters, event times, redaction of what a
dead letter keeps, and the one error tree every command reports from (pure)."""
