"""Data, splits, metrics and the isolated evaluation engine."""
