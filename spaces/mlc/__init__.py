"""Multi-label methods (problem transformation, algorithm adaptation, meta)."""
