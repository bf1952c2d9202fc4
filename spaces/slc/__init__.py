"""Single-label classifiers (the SLC level of the grammars)."""
