"""Numerical building blocks with no knowledge of the model: nearest-neighbour search,
the adaptive-neighbour closed form, Laplacian algebra on sparse graphs, feature
clustering, simplex projection, feature scaling and BLAS thread control."""

#: bound on the elements of a temporary (rows x candidates x dims) array of a chunked
#: computation over graph entries or candidate pairs
CHUNK_ELEMENTS = 2**21
