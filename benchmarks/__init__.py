"""Benchmarks of the Hudi engine against a same-run baseline (``make bench``; see ``run.py``)."""
