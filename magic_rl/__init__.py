"""Stage two: multi-objective RL (GRPO, GiGPO, chi-PO) on verl and a local trainer."""
