"""Studies of one alarm across many pairs of groups."""
