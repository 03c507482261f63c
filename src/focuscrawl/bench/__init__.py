"""Reproducible benchmarks on labelled offline webs."""
