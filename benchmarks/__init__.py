"""Benchmarks: ``python -m benchmarks --help``.  Timings are measured side by side in one run, never asserted."""
