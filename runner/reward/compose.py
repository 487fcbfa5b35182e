"""The service's configuration, composed from conf/ by Hydra and validated exactly like a run's: the one
composition of runner/compose.py, validated by runner/run/validation.py (this name is the reward API's)."""

from runner.run.validation import compose_config

__all__ = ["compose_config"]
