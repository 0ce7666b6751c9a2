"""The studies' and papers' figures: heatmaps, shield comparisons, the energy-shield and fairness-shield papers'
tables and plots."""
