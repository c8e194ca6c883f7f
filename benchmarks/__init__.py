"""Benchmarks: the eval harness, model-backed policies, paper-style tables and throughput figures."""
