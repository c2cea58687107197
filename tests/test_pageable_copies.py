"""Pageable and pinned host copies told apart (issue 43, item 3): CUPTI's memcpy records
name each end's memory, a call whose host copies are all pageable is placed against the
pageable copies' own measured ceiling (9.9 GB/s H2D on the bundled H200 profile, against
55.5 pinned), and a profile without one says it placed against pinned memory's."""

import dataclasses
from types import SimpleNamespace

import pytest

from linkroof.profiler import cupti as C
from linkroof.profiler.compare import host_copies
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import timeline as T
from linkroof.roofline.model import MachineModel
from linkroof.roofline.place import place
from linkroof.schema import Workload

MODEL = MachineModel.from_profile(bundled_profile())
GB = 1e9


def test_the_profiles_pageable_figures_are_roofs_of_their_own_per_direction():
    host = {r.mechanism: r.value for r in MODEL.roofs if r.resource == "link:host" and r.kind == "measured"}
    assert host["ce"] == pytest.approx(55.5 * GB, rel=0.01)
    assert host["ce (pageable h2d)"] == pytest.approx(9.9 * GB, rel=0.02)
    assert host["ce (pageable d2h)"] == pytest.approx(18.4 * GB, rel=0.02)
    assert MODEL.find("link:host").value == host["ce"]  # the machine's host ceiling stays pinned memory's


def test_a_pageable_call_is_placed_against_its_own_ceiling():
    w = Workload("h2d", link_bytes={"host": 256 << 20}, message_bytes=256 << 20)
    pinned = place(w, 0.03, MODEL)
    pageable = place(dataclasses.replace(w, params={"host_memory": "pageable h2d"}), 0.03, MODEL)
    assert pinned.terms_s["link:host"] == pytest.approx((256 << 20) / (55.5 * GB), rel=0.02)
    assert pageable.terms_s["link:host"] == pytest.approx((256 << 20) / (9.9 * GB), rel=0.05)
    assert any("pageable h2d copies' own measured ceiling" in f for f in pageable.flags)
    bare = dataclasses.replace(MODEL, roofs=[r for r in MODEL.roofs if "pageable" not in r.mechanism],
                               curves=[c for c in MODEL.curves if "pageable" not in c.mechanism])
    fallback = place(dataclasses.replace(w, params={"host_memory": "pageable h2d"}), 0.03, bare)
    assert fallback.terms_s["link:host"] == pytest.approx(pinned.terms_s["link:host"])
    assert any("do not reach" in f for f in fallback.flags)


@pytest.mark.parametrize("src, dst, said", [(1, 3, " (Pageable -> Device)"), (2, 3, " (Pinned -> Device)"),
                                            (3, 1, " (Device -> Pageable)"), (None, 3, "")])
def test_cuptis_memory_kinds_name_the_copy(src, dst, said):
    r = SimpleNamespace(src_kind=src, dst_kind=dst)
    assert C._memory_kinds(r, None) == said


def _timeline(*names):
    acts = [T.Activity("memcpy", n, 0, 7, i * 10_000, i * 10_000 + 5_000, i + 1, bytes=1 << 20,
                       copy_kind="HtoD" if "HtoD" in n else "DtoH") for i, n in enumerate(names)]
    return T.summarize(acts, [0])


def test_host_copies_of_a_call():
    assert host_copies(_timeline("memcpy HtoD (Pageable -> Device)")) == "pageable h2d"
    assert host_copies(_timeline("memcpy DtoH (Device -> Pageable)")) == "pageable d2h"
    assert host_copies(_timeline("memcpy HtoD (Pinned -> Device)")) is None
    assert host_copies(_timeline("memcpy HtoD (Pageable -> Device)", "memcpy HtoD (Pinned -> Device)")) is None
    assert host_copies(_timeline("memcpy HtoD (Pageable -> Device)", "memcpy DtoH (Device -> Pageable)")) == \
        "pageable both ways"
    assert host_copies(_timeline("memcpy HTOD")) is None and host_copies(None) is None


def test_a_pageable_figure_is_never_held_to_the_links_spec():
    """The driver stages a pageable copy through a pinned buffer: 9.9 GB/s is no share of
    PCIe's 63 GB/s, so the overview gives it none and the spec gate does not judge it."""
    from linkroof.roofline import gate
    from linkroof.roofline.summaries import headline_rows

    rows = {r["figure"]: r for r in headline_rows(bundled_profile(), MODEL)}
    page = rows["host link (ce (pageable h2d))"] if "host link (ce (pageable h2d))" in rows else next(
        r for f, r in rows.items() if "pageable h2d" in f)
    assert page["percent_of_spec"] is None and page["spec"] == "not applicable"
    assert "not held to the link's spec" in page["flags"]
    from linkroof.dashboard.report import report_html

    html = report_html(bundled_profile())
    row = html[html.index("ce (pageable h2d)"):].split("</tr>")[0]
    assert row.count("not applicable") == 2 and "unknown" not in row  # spec and % of spec alike
    pinned = next(r for f, r in rows.items() if f.endswith("(ce)") and r["unit"] == "GB/s" and "host" in f.lower())
    assert pinned["percent_of_spec"] == pytest.approx(100 * 55.5 / 63.0, abs=0.5)
    assert not any("pageable" in c.name for c in gate.against_spec(bundled_profile(), 0.70).checks)
