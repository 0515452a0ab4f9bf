"""Blocks that build the variables before the loop (no promise about the objective)."""
