"""One monitor's settings, counts and evaluation: what the merge (`fairstream.monitor`) keeps and judges."""
