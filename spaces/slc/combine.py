"""Single-label Stacking and Vote (PBIL-Auto-Ens-v2's ST and VT ensembles): being written."""
