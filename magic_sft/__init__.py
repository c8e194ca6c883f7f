"""Stage one: the synthetic trajectory corpus and supervised fine-tuning (dense and MoE)."""
