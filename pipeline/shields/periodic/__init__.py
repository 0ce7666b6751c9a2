"""The fixed-horizon and periodic shields of the fairness-shield paper (Cano et al., AAAI 2025) and the naive shield,
the baselines energy shields are compared with: FinHzn, Static-Fair, Static-BW, Dynamic and their equal-opportunity
versions (pure)."""
