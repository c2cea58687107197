"""The probe against real recordings (2xH200, 1xH200) and synthetic scenarios."""

import json
import re

import pytest

import fakes
from fakes import DATA
from linkroof import probe
from linkroof.profiler.probe import probe_source
from linkroof.profiler.recording import replay_source, validate
from linkroof.roofline.summaries import p2p_matrix, topo_matrix
from linkroof.schema import Topology, Unknown, dumps, known, loads

GB = 1e9


def scenario(name: str) -> Topology:
    return probe_source(replay_source(validate(fakes.SCENARIOS[name]().recording(), name), name))


def parse_smi_topo(log: str) -> dict[str, list[str]]:
    """Rows of `nvidia-smi topo -m` from a device log: {'GPU0': [cells...]}, plus the header."""
    block = log.split("== nvidia-smi topo -m\n", 1)[1].split("\n\n", 1)[0]
    lines = block.splitlines()
    rows = {"header": [c.strip() for c in lines[0].split("\t") if c.strip()]}
    for line in lines[1:]:
        cells = [c.strip() for c in line.split("\t")]
        rows[cells[0]] = [c for c in cells[1:] if c != ""]
    return rows


# ---------------------------------------------------------------- real 2xH200


@pytest.fixture(scope="module")
def h200x2() -> Topology:
    return probe(replay="h200x2")


def test_h200x2_gpus_and_links(h200x2):
    t = h200x2
    assert t.source == "replay:h200x2"
    assert len(t.gpus) == 2
    for g in t.gpus:
        assert g.name == "NVIDIA H200"
        assert g.compute_capability == "9.0" and g.sm_count == 132
        assert (g.pcie_gen_current, g.pcie_width_current, g.pcie_gen_max, g.pcie_width_max) == (5, 16, 5, 16)
        assert isinstance(g.gpu_numa_id, Unknown) and "NotSupported" in g.gpu_numa_id.reason
        assert g.numa_affinity == 0  # derived from the CPU affinity, as nvidia-smi does
        assert len(g.active_nvlinks) == 18
        assert {link.version for link in g.nvlinks} == {"4.0"}  # NVML enum 6
        assert {link.generation for link in g.nvlinks} == {4}
        assert {link.remote_type for link in g.nvlinks} == {"switch"}
        assert {link.line_rate_bytes_per_s for link in g.nvlinks} == {26.5625 * GB}
        assert g.mig.enabled is False


def test_h200x2_pair_through_nvswitch(h200x2):
    for a, b in ((0, 1), (1, 0)):
        p = h200x2.pair(a, b)
        assert (p.nvlink_count, p.nvlink_via, p.pcie_level) == (18, "switch", "PHB")
        assert (p.p2p_read, p.p2p_write, p.p2p_atomics, p.p2p_nvlink) == ("OK", "OK", "OK", "OK")


def test_h200x2_spec_ceilings(h200x2):
    c = h200x2.ceiling("gpu0.nvlink")
    assert c.kind == "spec"
    assert c.bytes_per_s == pytest.approx(18 * 26.5625 * GB)  # 478.125 GB/s line rate
    assert c.data_bytes_per_s == pytest.approx(18 * 25 * GB)  # 450 GB/s data rate
    assert h200x2.ceiling("gpu1.pcie").bytes_per_s == pytest.approx(63.0 * GB, rel=1e-3)
    assert h200x2.ceiling("gpu0.hbm").bytes_per_s == 4.8e12  # the datasheet: the one HBM spec every view shows
    assert "6016-bit bus x 3201 MHz x 2 gives 4814.3 GB/s" in h200x2.ceiling("gpu0.hbm").basis
    pair = h200x2.ceiling("pair0-1")
    assert pair.path == "nvlink" and pair.bytes_per_s == pytest.approx(478.125 * GB)


def test_h200x2_matches_nvidia_smi_topo(h200x2):
    """The matrix agrees cell by cell with `nvidia-smi topo -m` run on the same machine."""
    smi = parse_smi_topo((DATA / "h200x2" / "device_probe.log.txt").read_text())
    assert smi["header"] == ["GPU0", "GPU1", "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]
    ours = {line.split()[0]: line.split()[1:] for line in topo_matrix(h200x2).splitlines()[1:] if line.strip()}
    for row in ("GPU0", "GPU1"):
        assert ours[row] == smi[row], row


def test_h200x2_replay_equals_live_probe(h200x2):
    """Replaying the recording gives exactly what the live probe printed on the device."""
    live = json.loads((DATA / "h200x2" / "topology.live.json").read_text())
    replayed = json.loads(dumps(h200x2))
    for doc in (live, replayed):
        for key in ("probed_at", "probe_seconds", "source"):
            doc.pop(key)
    # the HBM ceiling is derived, and its derivation changed after that live run: the
    # datasheet's 4.8 TB/s now (one HBM spec everywhere), the bus x clock figure the live
    # probe gave kept in its basis
    hbm = {c["name"]: c for c in live["ceilings"] if c["path"] == "hbm"}
    for c in replayed["ceilings"]:
        if c["path"] == "hbm":
            old = hbm[c["name"]]
            assert c["bytes_per_s"] == 4.8e12 and f"gives {old['bytes_per_s'] / 1e9:.1f} GB/s" in c["basis"]
            c.update(bytes_per_s=old["bytes_per_s"], data_bytes_per_s=old["data_bytes_per_s"], basis=old["basis"])
    assert replayed == live


def test_h200x1_single_gpu_matches_nvidia_smi():
    t = probe(replay="h200x1")
    assert len(t.gpus) == 1 and t.pairs == ()
    smi = parse_smi_topo((DATA / "h200x1" / "device_probe.log.txt").read_text())
    ours = topo_matrix(t).splitlines()[1].split()
    assert ours[1:] == smi["GPU0"]
    assert not t.gpus[0].nvlinks  # this VM exposes no NVLink to NVML
    assert any("NVLink state not available" in n for n in t.notes)


# ---------------------------------------------------------------- synthetic


def test_hgx_h100_8_gpu_board():
    t = scenario("hgx_h100_8")
    assert len(t.gpus) == 8 and len(t.pairs) == 56
    assert all(p.nvlink_count == 18 and p.nvlink_via == "switch" for p in t.pairs)
    assert [g.numa_affinity for g in t.gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert len(t.host.numa_nodes) == 2
    assert t.pair(0, 1).pcie_level == "PIX" and t.pair(0, 2).pcie_level == "NODE" and t.pair(0, 5).pcie_level == "SYS"
    assert len(t.nics) == 8
    for i, nic in enumerate(t.nics):
        assert nic.kind == "infiniband" and nic.link_layer == "InfiniBand"
        assert nic.rate_bytes_per_s == pytest.approx(50 * GB)  # 400 Gb/s
        assert nic.nearest_gpu == (i // 2) * 2  # two GPUs share each switch; ties go to the lower index
        assert nic.gpu_levels[i // 2 * 2] == "PIX"
        assert nic.netdevs == (f"ibp{i}",)
    matrix = topo_matrix(t)
    assert matrix.splitlines()[1].split()[:17] == ["GPU0", "X"] + ["NV18"] * 7 + ["PIX", "PIX", "NODE", "NODE"] + ["SYS"] * 4
    assert "NIC7: mlx5_7" in matrix
    assert t.ceiling("nic.mlx5_3").bytes_per_s == pytest.approx(50 * GB)
    assert t.gpus[0].fabric.state == "not started" and isinstance(t.gpus[0].fabric.clique_id, Unknown)


def test_pcie_only_box():
    t = scenario("pcie_box_4")
    assert all(not g.nvlinks for g in t.gpus)
    assert all(p.nvlink_via == "none" and p.nvlink_count == 0 for p in t.pairs)
    assert t.pair(0, 1).pcie_level == "PIX" and t.pair(2, 3).pcie_level == "PXB" and t.pair(1, 3).pcie_level == "SYS"
    assert t.pair(0, 2).p2p_read == "TNS"
    assert t.ceiling("pair0-1").path == "pcie"
    assert t.ceiling("pair0-1").bytes_per_s == pytest.approx(31.5 * GB, rel=1e-3)  # Gen4 x16
    assert t.ceiling("pair1-3").path == "host-staged"
    assert "TNS/TNS/TNS" in p2p_matrix(t)
    eth = t.nics[0]
    assert eth.kind == "ethernet" and eth.rate_bytes_per_s == pytest.approx(25e9 / 8) and eth.nearest_gpu == 0
    assert "NIC0" not in topo_matrix(t)  # nvidia-smi lists RDMA devices only


def test_driver_refusing_every_nvlink_and_p2p_query():
    t = scenario("nvml_refuses_links")
    assert all(g.nvlinks == () for g in t.gpus)
    p = t.pair(0, 1)
    assert isinstance(p.nvlink_count, Unknown) and isinstance(p.p2p_read, Unknown)
    assert p.pcie_level == "PHB"  # fell back to sysfs PCI paths
    assert any("sysfs" in n for n in t.notes)
    assert isinstance(t.ceiling("pair0-1").bytes_per_s, Unknown)
    assert "?" not in topo_matrix(t).splitlines()[1]
    assert loads(dumps(t), Topology) == t


def test_a100_with_mig():
    t = scenario("a100_mig")
    g = t.gpus[0]
    assert g.mig.enabled is True and g.mig.pending is True and g.mig.instances == 3
    assert g.compute_capability == "8.0" and g.sm_count == 108
    assert g.nvlinks and not g.active_nvlinks
    assert {link.version for link in g.nvlinks} == {"3.0"}  # NVML enum 4
    assert not any(c.path == "nvlink" for c in t.ceilings)


@pytest.mark.parametrize("name", sorted(fakes.SCENARIOS))
def test_every_scenario_round_trips_json(name):
    t = scenario(name)
    assert loads(dumps(t), Topology) == t
    assert json.loads(dumps(t))["schema"] == "linkroof.Topology"


def test_missing_answers_become_unknown_not_crashes():
    rec = fakes.h200x2_like().recording()
    for key in [k for k in rec["nvml"] if k.startswith(("memory_total", "pcie_gen_max", "name|1", "field|0|164"))]:
        del rec["nvml"][key]
    t = probe_source(replay_source(rec, "partial"))
    assert isinstance(t.gpus[0].memory_total_bytes, Unknown)
    assert "not in the recording" in t.gpus[0].memory_total_bytes.reason
    assert isinstance(t.ceiling("gpu0.pcie").bytes_per_s, Unknown)
    assert isinstance(t.gpus[0].active_nvlinks[0].line_rate_bytes_per_s, Unknown)
    assert isinstance(t.ceiling("gpu0.nvlink").bytes_per_s, Unknown)
    assert t.ceiling("gpu0.nvlink").data_bytes_per_s == pytest.approx(450 * GB)  # the generation is still known
    assert known(t.ceiling("gpu1.nvlink").bytes_per_s)
    assert re.search(r"N/A", topo_matrix(t))
