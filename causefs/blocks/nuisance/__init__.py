"""Blocks that use known nuisance variables Z (``fit(X, nuisance=Z)``)."""
