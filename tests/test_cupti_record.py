"""profiler/cupti.record on the CPU, through a stand-in for cupti-python and a GPU that
runs behind the host: the call that absorbs CUPTI's start-up is waited for before the
kept calls start, so none of its kernels is counted among theirs."""

import sys
import types

from linkroof.profiler import cupti as C
from linkroof.roofline.timeline import Activity


class BehindTheHost:
    """Host and GPU clocks (ns): a launch costs the host 1 ns and queues a 20 ns kernel;
    the GPU runs each kernel when it is free; a sync waits for the GPU."""

    def __init__(self):
        self.host, self.gpu_free, self.kernels = 0, 0, []

    def stamp(self):
        self.host += 1
        return self.host

    def call(self, i):
        for j in range(2):
            self.host += 1
            start = max(self.host, self.gpu_free)
            self.gpu_free = start + 20
            self.kernels.append(Activity(kind="kernel", name=f"k{i}_{j}", start_ns=start, end_ns=start + 20,
                                         device=0, stream=7, correlation=10 * i + j))

    def sync(self):
        self.host = max(self.host, self.gpu_free)


def test_the_dropped_call_is_waited_for_and_none_of_its_kernels_kept(monkeypatch):
    sim = BehindTheHost()
    fake = types.SimpleNamespace(
        ActivityKind=types.SimpleNamespace(**{k: k for k in C.KINDS}),
        activity_register_callbacks=lambda *a: None, activity_flush_all=lambda *a: None,
        activity_enable=lambda k: None, activity_disable=lambda k: None, get_timestamp=sim.stamp)
    monkeypatch.setitem(sys.modules, "cupti", types.SimpleNamespace(cupti=fake))
    monkeypatch.setattr(C, "_STATE", {})
    monkeypatch.setattr(C, "to_activities", lambda records, cupti: (list(sim.kernels), {}))
    acts, starts, _ = C.record(3, sim.call, sim.sync)
    assert [a.name for a in acts] == ["k1_0", "k1_1", "k2_0", "k2_1", "k3_0", "k3_1"]  # k0_1 ran at 22: not kept
    assert len(starts) == 3 and all(a.start_ns >= starts[0] for a in acts)
