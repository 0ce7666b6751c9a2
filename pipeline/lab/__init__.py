"""The lab wing: simulation studies, benchmarks, the papers' tables and figures, the tuning study and the periodic
baseline shields. It imports the product; nothing in the product imports it (`tests/test_floors.py`)."""
