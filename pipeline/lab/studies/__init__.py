"""Studies: the real monitor run many times over generated streams, condensed into summary statistics."""
