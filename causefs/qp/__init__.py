"""Simplex-constrained convex QPs (the mu update) and their solver backends."""

from .base import QPBackend, QPResult
from ..simplex import project_simplex
from .problem import SimplexQP

__all__ = ["QPBackend", "QPResult", "SimplexQP", "project_simplex"]
