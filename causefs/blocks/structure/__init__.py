"""Blocks that change the objective itself: the feature groups and the confounder sets."""
