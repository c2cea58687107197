"""place() refuses a workload whose counts are negative or not a number, by name, before
any ceiling is read: a negative message size with NVLink bytes reached a ceiling's size
curve and raised ZeroDivisionError from deep inside (found by a helper, 2026-12-05). The
TOML loader already refuses them; this is the Python API's door."""

import math

import pytest

from linkroof.roofline.model import MachineModel
from linkroof.roofline.place import PlacementError, place
from linkroof.schema import Workload
from linkroof.store import load_profile_file


@pytest.fixture(scope="module")
def model():
    return MachineModel.from_profile(load_profile_file("linkroof/data/h200x2.profile.json"))


@pytest.mark.parametrize("wl, named", [
    (Workload("w", link_bytes={"nvlink": 1e9}, message_bytes=-1), "message size -1"),
    (Workload("w", link_bytes={"nvlink": 1e9}, message_bytes=-4096), "message size -4096"),
    (Workload("w", link_bytes={"nvlink": -1e9}), "link bytes (nvlink) -1000000000.0"),
    (Workload("w", hbm_bytes=-5.0), "HBM bytes -5.0"),
    (Workload("w", flops={"bf16": -1.0}, hbm_bytes=1e6), "FLOPs (bf16) -1.0"),
    (Workload("w", hbm_bytes=math.nan), "HBM bytes nan"),
])
def test_a_negative_or_nan_count_is_refused_by_name(model, wl, named):
    with pytest.raises(PlacementError) as e:
        place(wl, 1e-3, model)
    assert str(e.value) == f"workload 'w': counts must be zero or more, not {named}"


def test_every_bad_count_is_named_at_once(model):
    wl = Workload("w", hbm_bytes=-1.0, link_bytes={"nvlink": 1e9}, message_bytes=-2)
    with pytest.raises(PlacementError, match=r"not HBM bytes -1\.0, message size -2$"):
        place(wl, 1e-3, model)


def test_zero_counts_and_no_message_size_still_place(model):
    p = place(Workload("w", link_bytes={"nvlink": 1e9}, message_bytes=0), 1e-3, model)
    q = place(Workload("w", link_bytes={"nvlink": 1e9, "pcie": 0.0}), 1e-3, model)
    assert p.limiter == q.limiter == "link:nvlink" and p.bound_time_s > 0 and q.bound_time_s > 0
