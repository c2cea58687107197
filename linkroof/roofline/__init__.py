"""Pure arithmetic on the data model (no CuPy, NVML or I/O): spec peaks and link rates,
the machine model, collective formulas, workloads, placement and baselines, the
mechanism advisor, and the analyses the views show."""
