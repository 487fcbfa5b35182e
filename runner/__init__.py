"""Reference runner for generative-UI benchmarks."""

__version__ = "0.1.0"
