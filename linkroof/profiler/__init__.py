"""Topology probe (NVML + sysfs), recordings, environment; later: run orchestration and counters."""
