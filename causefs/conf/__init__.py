"""Hydra configuration groups of the causefs CLI (shipped inside the wheel)."""
