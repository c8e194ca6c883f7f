"""Serving benchmark (`python -m benchmarks.serving`): load.py measures an endpoint, vllm_server.py starts vLLM."""
