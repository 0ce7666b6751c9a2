"""The bundled monitor specs, installed as package data: `fairstream run compas_equalized_odds …` finds them by name."""
