"""Benchmarks: throughput and cost measured as ratios to a baseline run in the same process."""
