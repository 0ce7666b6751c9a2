"""The fixed-horizon and periodic shields of the fairness-shield paper (Cano et al., AAAI 2025) and the naive shield,
the baselines energy shields are compared with: FinHzn, Static-Fair, Static-BW, Dynamic and their equal-opportunity
versions (pure)."""

from fairstream.lab.periodic.arrivals import ArrivalModel, confidence_cost
from fairstream.lab.periodic.finhzn import FinHznShield, parity_gap
from fairstream.lab.periodic.naive import NaiveParityShield, NaiveShield
from fairstream.lab.periodic.periods import Dynamic, PeriodState, StaticBW, StaticFair

__all__ = ["ArrivalModel", "Dynamic", "FinHznShield", "NaiveParityShield", "NaiveShield", "PeriodState", "StaticBW", "StaticFair", "confidence_cost", "parity_gap"]
