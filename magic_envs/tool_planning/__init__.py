"""Tool-augmented planning: function calling over a synthetic API universe, scored with BFCL semantics."""
