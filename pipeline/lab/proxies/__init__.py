"""Groups known only as probabilities, measured: calibrated proxy streams and the BISG lending stream."""
