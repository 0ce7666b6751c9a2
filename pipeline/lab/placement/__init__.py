"""How many decisions a shield flips beside the fewest that reach the same end, with groups of uneven size (lab)."""
