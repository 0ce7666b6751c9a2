"""The reference data sets (COMPAS, Adult, German Credit): where they come from, how they are checked, where they are found."""

from fairstream.datasets.catalog import CATALOG, DataSet, by_file, cache_dir, data_file, get_line, locate

__all__ = ["CATALOG", "DataSet", "by_file", "cache_dir", "data_file", "get_line", "locate"]
