"""One alarm across many pairs of groups: a pooled test of every pair at once, and the merged evidence of a monitor."""
