"""The machine model and placement: pure arithmetic on the data model (no CuPy, no NVML)."""
