"""Benchmarks: run as scripts (``python -m bench.<name>``), never collected as tests."""
