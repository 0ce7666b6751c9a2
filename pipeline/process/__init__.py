"""The process a run lives in (ground floor, no other room imported): stop requests by signal, and the readiness its
health endpoint reports."""
