"""The user-kernel timer (`linkroof compare`) against plain CUDA events, on one GPU:
a 1 GiB device-to-device copy through CuPy and through PyTorch, timed both ways, and
the gated and ungated forms of the one timing protocol on the same copy.

    python3 benchmarks/timer_check.py
"""

import statistics

from linkroof.microbench.timing import time_calls


def main() -> None:
    import cupy

    n = 1 << 28  # 1 GiB of float32
    a = cupy.ones(n, dtype=cupy.float32)
    b = cupy.empty_like(a)
    for _ in range(3):
        b[...] = a
    cupy.cuda.Device().synchronize()
    ev = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(20)]
    for s, e in ev:
        s.record()
        b[...] = a
        e.record()
    ev[-1][1].synchronize()
    plain = statistics.median(cupy.cuda.get_elapsed_time(s, e) / 1e3 for s, e in ev)
    ungated = statistics.median(time_calls(lambda i: b.__setitem__(Ellipsis, a), 20, "cupy"))
    gated = statistics.median(time_calls(lambda i: b.__setitem__(Ellipsis, a), 20, "cupy", gated=True))
    print(f"cupy 1 GiB copy: plain events {plain * 1e6:.1f} us, time_calls ungated {ungated * 1e6:.1f} us, "
          f"gated {gated * 1e6:.1f} us ({(1 << 30) / ungated / 1e9:.1f} GB/s copied)")
    assert abs(ungated / plain - 1) < 0.03 and abs(gated / plain - 1) < 0.03
    try:
        import torch
    except ImportError:
        return
    t = torch.ones(n, device="cuda")
    u = torch.empty_like(t)
    for _ in range(3):
        u.copy_(t)
    torch.cuda.synchronize()
    tev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(20)]
    for s, e in tev:
        s.record()
        u.copy_(t)
        e.record()
    torch.cuda.synchronize()
    tplain = statistics.median(s.elapsed_time(e) / 1e3 for s, e in tev)
    tours = statistics.median(time_calls(lambda i: u.copy_(t), 20, "torch"))
    print(f"torch 1 GiB copy: torch events {tplain * 1e6:.1f} us, time_calls {tours * 1e6:.1f} us")
    assert abs(tours / tplain - 1) < 0.03


if __name__ == "__main__":
    main()
