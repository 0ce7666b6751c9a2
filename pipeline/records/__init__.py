"""The record path's ground floor: raw records and events, dead letters, event times, redaction of what a dead letter
keeps, the hash chains and their seals, and the one error tree every command reports from (pure)."""
