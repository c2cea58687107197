"""Instruments only: CUDA microbenchmarks through CuPy (imported lazily), one function
per benchmark taking explicit arguments and returning measurements; the kernels, the
one timing protocol and the verified buffers they use. No probe, store, launcher or
profile assembly here (profiler/ drives these)."""
