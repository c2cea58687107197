"""Scoring candidates (what a kernel-generation loop calls the judge): `score` runs one
candidate against its reference in a child process and checks, times and places it;
`child` is that process; `channel` the signed channel the child reports through;
`procs` the process bookkeeping that ends every process a candidate started; `batch`
many candidates over a manifest and GPUs. Scoring uses the profiler's measuring
(compare, clocks, counters, ncu, usercode); the profiler never imports scoring."""
