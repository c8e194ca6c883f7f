"""Long-horizon tool execution: stateful tool worlds and BFCL v3 multi-turn backends."""
