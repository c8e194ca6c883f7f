"""Hierarchical task decomposition: workflow graphs (Node/Edge text) scored like WorfBench."""
