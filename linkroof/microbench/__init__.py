"""CUDA microbenchmarks through CuPy (imported lazily; see the microbenchmark issue)."""
