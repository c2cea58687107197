"""On a machine with NVIDIA GPUs: the live probe agrees with nvidia-smi and replays exactly."""

import json
import shutil
import subprocess

import pytest

from linkroof import probe
from linkroof.roofline.summaries import topo_matrix
from linkroof.schema import dumps

pytestmark = pytest.mark.gpu


def test_live_probe_matches_nvidia_smi_topo():
    if shutil.which("nvidia-smi") is None:
        pytest.skip("nvidia-smi not on PATH")
    topo = probe()
    smi = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True, check=True).stdout
    import re

    smi = re.sub(r"\x1b\[[0-9;]*m", "", smi)
    smi_rows = {}
    for line in smi.splitlines():
        cells = [c.strip() for c in line.split("\t")]
        if cells and re.fullmatch(r"GPU\d+", cells[0]):
            smi_rows[cells[0]] = [c for c in cells[1:] if c]
    ours = {}
    for line in topo_matrix(topo).splitlines()[1:]:
        parts = line.split()
        if parts and parts[0].startswith("GPU"):
            ours[parts[0]] = parts[1:]
    assert set(ours) == set(smi_rows)
    for row, cells in smi_rows.items():
        # nvidia-smi shows its own NIC columns only for RDMA devices, as we do
        assert ours[row] == cells, row


def test_record_replay_identical(tmp_path):
    rec = tmp_path / "rec.json"
    live = json.loads(dumps(probe(record=str(rec))))
    replayed = json.loads(dumps(probe(replay=str(rec))))
    for doc in (live, replayed):
        for key in ("probed_at", "probe_seconds", "source"):
            doc.pop(key)
    assert live == replayed
