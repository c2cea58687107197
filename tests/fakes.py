"""A fake NVML + sysfs, as recordings built from synthetic scenarios.

Each scenario produces the same recording format `linkroof probe --record` writes, so
the probe and the CLI run against it exactly as against a real machine's recording.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from linkroof.profiler import nvml as q
from linkroof.profiler.recording import FORMAT, VERSION
from linkroof.profiler.sysfs import sysfs_bus_id

DATA = Path(__file__).parent / "data"  # real recordings and outputs from the accelerator machines

NOT_SUPPORTED = {"error": "NotSupported", "code": 3, "message": "Not Supported"}
INVALID = {"error": "InvalidArgument", "code": 2, "message": "Invalid Argument"}


class Scenario:
    def __init__(self, hostname: str = "fakehost", cpu_model: str = "Fake CPU @ 2.0GHz",
                 nodes: dict[int, str] | None = None, driver: str = "580.159.04"):
        self.nvml: dict[str, dict[str, Any]] = {}
        self.fs: dict[str, Any] = {}
        self.count = 0
        self.ok("driver_version", value=driver)
        self.ok("nvml_version", value="13." + driver)
        self.ok("cuda_driver_version", value=13000)
        self.fs["read:/proc/sys/kernel/hostname"] = hostname
        self.fs["read:/proc/sys/kernel/osrelease"] = "6.1.0-fake"
        self.fs["read:/proc/cpuinfo"] = f"processor\t: 0\nmodel name\t: {cpu_model}\n"
        nodes = nodes if nodes is not None else {0: "0-31"}
        self.fs["listdir:/sys/devices/system/node"] = [f"node{i}" for i in nodes] + ["possible"]
        for i, cpus in nodes.items():
            self.fs[f"read:/sys/devices/system/node/node{i}/cpulist"] = cpus
        self.fs["listdir:/sys/class/infiniband"] = None
        self.fs["listdir:/sys/class/net"] = ["lo"]
        self.fs["realpath:/sys/class/net/lo/device"] = None

    def ok(self, query: str, *args: Any, value: Any) -> None:
        self.nvml[q.answer_key(query, args)] = {"value": value}

    def err(self, query: str, *args: Any, error: dict[str, Any] = NOT_SUPPORTED) -> None:
        self.nvml[q.answer_key(query, args)] = dict(error)

    def set(self, query: str, *args: Any, value: Any) -> None:
        """A value, or an error answer when `value` is a dict with "error"."""
        if isinstance(value, dict) and "error" in value:
            self.err(query, *args, error=value)
        else:
            self.ok(query, *args, value=value)

    def pci_device(self, bus_id: str, path: str, numa: int = -1) -> None:
        sid = sysfs_bus_id(bus_id)
        self.fs[f"realpath:/sys/bus/pci/devices/{sid}"] = path
        self.fs[f"read:/sys/bus/pci/devices/{sid}/numa_node"] = str(numa)

    def gpu(self, *, name: str, bus_id: str, path: str, cc: tuple[int, int], cores: int, memory: int,
            bus_width: int, sm_clock: int, mem_clock: int, pcie: tuple[int, int], affinity: list[int],
            numa: int = -1, arch: int = 9, gpu_numa: Any = NOT_SUPPORTED, mig: Any = NOT_SUPPORTED,
            nvlinks: list[dict[str, Any]] | None = None, link_count: Any = None, speed: Any = None,
            fabric: Any = None, mig_instances: int = 0) -> int:
        d = self.count
        self.count += 1
        self.ok("device_count", value=self.count)
        self.ok("name", d, value=name)
        self.ok("uuid", d, value=f"GPU-{d:08x}-fake")
        self.ok("pci_bus_id", d, value=bus_id)
        self.ok("architecture", d, value=arch)
        self.ok("compute_capability", d, value=list(cc))
        self.ok("num_gpu_cores", d, value=cores)
        self.ok("memory_total", d, value=memory)
        self.ok("memory_bus_width", d, value=bus_width)
        self.ok("max_clock", d, q.CLOCK_SM, value=sm_clock)
        self.ok("max_clock", d, q.CLOCK_MEM, value=mem_clock)
        self.ok("pcie_gen_current", d, value=pcie[0])
        self.ok("pcie_gen_max", d, value=pcie[0])
        self.ok("pcie_width_current", d, value=pcie[1])
        self.ok("pcie_width_max", d, value=pcie[1])
        self.set("numa_node_id", d, value=gpu_numa)
        masks = [0, 0, 0, 0]
        for cpu in affinity:
            masks[cpu // 64] |= 1 << (cpu % 64)
        self.ok("cpu_affinity", d, value=masks)
        self.set("mig_mode", d, value=mig)
        if isinstance(mig, list) and mig[0]:
            self.ok("max_mig_device_count", d, value=7)
            for i in range(7):
                self.set("mig_device_exists", d, i, value=True if i < mig_instances else {"error": "NotFound", "code": 6})
        self.set("fabric_info", d, value=fabric if fabric is not None else
                 {"error": "TypeError", "message": "nvmlDeviceGetGpuFabricInfo() missing 1 required positional argument"})
        self.pci_device(bus_id, path, numa)
        links = nvlinks or []
        if link_count is not None:
            self.set("field", d, q.FI_NVLINK_LINK_COUNT, 0, value=link_count)
        elif links:
            self.ok("field", d, q.FI_NVLINK_LINK_COUNT, 0, value=len(links))
        if speed is not None:
            self.set("field", d, q.FI_NVLINK_GET_SPEED, 0, value=speed)
        for i, link in enumerate(links):
            self.set("nvlink_state", d, i, value=link.get("state", 1))
            self.set("nvlink_version", d, i, value=link.get("version", 6))
            self.set("nvlink_remote_type", d, i, value=link.get("remote_type", 2))
            self.set("nvlink_remote_pci_bus_id", d, i, value=link.get("remote", "FFFFFFFF:FF:FF.0"))
            self.set("nvlink_capability", d, i, q.NVLINK_CAP_P2P_SUPPORTED, value=link.get("p2p", 1))
            self.set("nvlink_capability", d, i, q.NVLINK_CAP_P2P_ATOMICS, value=link.get("atomics", 1))
            if "speed" in link:
                self.set("field", d, q.FI_NVLINK_GET_SPEED, i, value=link["speed"])
        if not links:
            self.err("nvlink_state", d, 0)
        return d

    def pair(self, a: int, b: int, level: Any, read: Any = 0, write: Any = 0, nvlink: Any = 0,
             atomics: Any = 0, pcie: Any = 5) -> None:
        for x, y in ((a, b), (b, a)):
            self.set("topology_common_ancestor", x, y, value=level)
            for name, v in (("read", read), ("write", write), ("nvlink", nvlink), ("atomics", atomics), ("pcie", pcie)):
                self.set("p2p_status", x, y, q.P2P_INDEX[name], value=v)

    def ib_nic(self, name: str, path: str, rate: str = "400 Gb/sec (4X NDR)", link_layer: str = "InfiniBand",
               netdevs: list[str] | None = None, numa: int = -1) -> None:
        lst = self.fs.get("listdir:/sys/class/infiniband") or []
        self.fs["listdir:/sys/class/infiniband"] = lst + [name]
        base = f"/sys/class/infiniband/{name}"
        self.fs[f"realpath:{base}/device"] = path
        self.fs[f"listdir:{base}/ports"] = ["1"]
        self.fs[f"read:{base}/ports/1/rate"] = rate
        self.fs[f"read:{base}/ports/1/state"] = "4: ACTIVE"
        self.fs[f"read:{base}/ports/1/link_layer"] = link_layer
        self.fs[f"listdir:{base}/device/net"] = netdevs or []
        bus = path.rstrip("/").split("/")[-1]
        self.fs[f"read:/sys/bus/pci/devices/{bus}/numa_node"] = str(numa)
        for nd in netdevs or []:
            self.fs["listdir:/sys/class/net"] = self.fs["listdir:/sys/class/net"] + [nd]
            self.fs[f"realpath:/sys/class/net/{nd}/device"] = path

    def eth_nic(self, name: str, path: str, speed_mbps: int = 100000, numa: int = -1) -> None:
        self.fs["listdir:/sys/class/net"] = self.fs["listdir:/sys/class/net"] + [name]
        self.fs[f"realpath:/sys/class/net/{name}/device"] = path
        self.fs[f"read:/sys/class/net/{name}/speed"] = str(speed_mbps)
        self.fs[f"read:/sys/class/net/{name}/operstate"] = "up"
        bus = path.rstrip("/").split("/")[-1]
        self.fs[f"read:/sys/bus/pci/devices/{bus}/numa_node"] = str(numa)

    def recording(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "meta": {"synthetic": True},
                "nvml": self.nvml, "fs": self.fs}


GIB = 1 << 30
H100_SXM = dict(name="NVIDIA H100 80GB HBM3", cc=(9, 0), cores=16896, memory=80 * GIB, bus_width=5120,
                sm_clock=1980, mem_clock=2619, pcie=(5, 16), arch=9)
NV18_SWITCH = [{"state": 1, "version": 6, "remote_type": 2}] * 18


def h200x2_like() -> Scenario:
    """The shape of the 2xH200 VM in shared/device-data (for tests that need no real file)."""
    s = Scenario(hostname="vm", nodes={0: "0-31"})
    for i, bus in enumerate(("00000000:00:06.0", "00000000:00:07.0")):
        s.gpu(name="NVIDIA H200", bus_id=bus, path=f"/sys/devices/pci0000:00/0000:00:0{6 + i}.0",
              cc=(9, 0), cores=16896, memory=150754820096, bus_width=6016, sm_clock=1980, mem_clock=3201,
              pcie=(5, 16), affinity=list(range(32)), nvlinks=NV18_SWITCH, speed=26562)
    s.pair(0, 1, level=30, read={"error": "TypeError", "message": "Don't know how to convert parameter 3"},
           write=0, nvlink=0, atomics=0, pcie=5)
    return s


def hgx_h100_8() -> Scenario:
    """8-GPU HGX H100 board: NV18 into NVSwitch for every GPU, 2 NUMA nodes, 4 PCIe
    switches (2 GPUs + 2 NICs each), eight 400 Gb/s InfiniBand NICs."""
    s = Scenario(hostname="hgx", cpu_model="Intel(R) Xeon(R) Platinum 8480+", nodes={0: "0-55", 1: "56-111"})
    for g in range(8):
        sw = g // 2
        numa = 0 if sw < 2 else 1
        root = f"pci0000:{sw * 0x20:02x}"
        rp = f"0000:{sw * 0x20:02x}:01.0"
        up = f"0000:{sw * 0x20 + 1:02x}:00.0"
        down = f"0000:{sw * 0x20 + 2:02x}:{(g % 2) * 2:02x}.0"
        bus = f"0000:{sw * 0x20 + 3 + (g % 2):02x}:00.0"
        s.gpu(**H100_SXM, bus_id="0000" + bus, path=f"/sys/devices/{root}/{rp}/{up}/{down}/{bus}",
              affinity=list(range(0, 56)) if numa == 0 else list(range(56, 112)), numa=numa,
              nvlinks=NV18_SWITCH, speed=26562,
              fabric={"clique_id": 0, "cluster_uuid": "00" * 16, "state": 1, "status": 0})
        nic_down = f"0000:{sw * 0x20 + 2:02x}:{(g % 2) * 2 + 1:02x}.0"
        nic_bus = f"0000:{sw * 0x20 + 5 + (g % 2):02x}:00.0"
        s.ib_nic(f"mlx5_{g}", f"/sys/devices/{root}/{rp}/{up}/{nic_down}/{nic_bus}", netdevs=[f"ibp{g}"], numa=numa)
    for a in range(8):
        for b in range(a + 1, 8):
            same_switch = a // 2 == b // 2
            same_numa = (a // 4) == (b // 4)
            level = 10 if same_switch else (40 if same_numa else 50)
            s.pair(a, b, level=level)
    return s


def pcie_box_4() -> Scenario:
    """4 PCIe GPUs, no NVLink: GPU0/1 under one switch (PIX), GPU2 behind a second switch
    level on the same root port (PXB to GPU3), GPU2/3 on the other socket (SYS to 0/1,
    where P2P is not supported)."""
    s = Scenario(hostname="pciebox", nodes={0: "0-15", 1: "16-31"})
    l40s = dict(name="NVIDIA L40S", cc=(8, 9), cores=18176, memory=48 * GIB, bus_width=384,
                sm_clock=2520, mem_clock=9001, pcie=(4, 16), arch=8)
    paths = [
        "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0",
        "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0",
        "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:00.0/0000:83:00.0/0000:84:00.0/0000:85:00.0",
        "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:01.0/0000:86:00.0",
    ]
    for g, path in enumerate(paths):
        bus = "0000" + path.split("/")[-1]
        s.gpu(**l40s, bus_id=bus, path=path, affinity=list(range(16)) if g < 2 else list(range(16, 32)),
              numa=0 if g < 2 else 1, mig=NOT_SUPPORTED)
    s.pair(0, 1, level=10, nvlink=5, pcie=0)
    s.pair(2, 3, level=20, nvlink=5, pcie=0)
    for a in (0, 1):
        for b in (2, 3):
            s.pair(a, b, level=50, read=3, write=3, nvlink=5, atomics=3, pcie=3)
    s.eth_nic("enp65s0", "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:05:00.0", 25000, numa=0)
    return s


def nvml_refuses_links() -> Scenario:
    """Two GPUs on a driver that raises NotSupported for every NVLink and P2P query."""
    s = Scenario(hostname="stubborn")
    for i in range(2):
        d = s.gpu(**H100_SXM, bus_id=f"00000000:0{i + 1}:00.0", path=f"/sys/devices/pci0000:00/0000:00:0{i + 1}.0/0000:0{i + 1}:00.0",
                  affinity=list(range(32)), link_count=NOT_SUPPORTED, speed=NOT_SUPPORTED)
        for link in range(q.MAX_NVLINKS):
            s.err("nvlink_state", d, link)
    s.pair(0, 1, level=NOT_SUPPORTED, read=NOT_SUPPORTED, write=NOT_SUPPORTED, nvlink=NOT_SUPPORTED,
           atomics=NOT_SUPPORTED, pcie=NOT_SUPPORTED)
    return s


def a100_mig() -> Scenario:
    """One A100 80GB with MIG enabled (3 instances), NVLink links inactive."""
    s = Scenario(hostname="migbox")
    s.gpu(name="NVIDIA A100-SXM4-80GB", bus_id="00000000:07:00.0", path="/sys/devices/pci0000:00/0000:00:02.0/0000:07:00.0",
          cc=(8, 0), cores=6912, memory=80 * GIB, bus_width=5120, sm_clock=1410, mem_clock=1593, pcie=(4, 16),
          arch=7, affinity=list(range(32)), mig=[1, 1], mig_instances=3,
          nvlinks=[{"state": 0, "version": 4, "remote_type": 255, "remote": {"error": "NotSupported", "code": 3}}] * 12,
          speed=NOT_SUPPORTED)
    return s


SCENARIOS = {"h200x2_like": h200x2_like, "hgx_h100_8": hgx_h100_8, "pcie_box_4": pcie_box_4,
             "nvml_refuses_links": nvml_refuses_links, "a100_mig": a100_mig}


_STARTUP: list[float] = []


def startup_s() -> float:
    """How long a stand-in target takes to start here and now: a fresh interpreter that
    imports numpy and the result channel, timed once per session (the median of three).
    A machine under load (other suites beside this one) starts it slower."""
    if not _STARTUP:
        import statistics
        import subprocess
        import sys
        import time

        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import numpy, linkroof.scoring.channel"], check=True,
                           capture_output=True)
            times.append(time.perf_counter() - t0)
        _STARTUP.append(statistics.median(times))
    return _STARTUP[0]


def deadline(base_s: float, starts: int = 2) -> float:
    """A target's deadline from the work, not the wall clock: `base_s` (what the test
    means: a hang is called after it) plus the time `starts` fresh interpreters take to
    start here now (a sandbox's launcher and the target), four times over for the
    variance under load."""
    return base_s + 4 * starts * startup_s()
