"""Simplex-constrained convex QPs (the mu update) and their solver backends."""

from ..numerics.simplex import project_simplex
from .base import QPBackend, QPResult
from .problem import SimplexQP

__all__ = ["QPBackend", "QPResult", "SimplexQP", "project_simplex"]
