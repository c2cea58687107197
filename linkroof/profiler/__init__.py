"""Drives everything: the topology probe (NVML, sysfs), recordings, environment, link
counters, planning and running benchmarks, launchers and distributed runs, timing user
kernels, importers, and assembling and resolving profiles."""
