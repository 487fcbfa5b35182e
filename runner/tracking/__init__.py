"""Tracking: MLflow runs, model-call traces and sweeps (the run directory stays the source of truth)."""
