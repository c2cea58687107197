"""Readers of other tools' files: PyTorch profiler traces (`traces`), NCCL's own
telemetry (`telemetry`: NCCL Inspector, Flight Recorder, nccl-tests per-iteration JSON)
and benchmark tools' outputs (`tools`: nvbandwidth, nccl-tests tables). They read files
only: no CUDA, no NVML, no store; placing what they read uses `roofline/`."""
