"""Latency + bandwidth fits: exact on exact data, piecewise where one line does not fit,
every fit states its worst error, and the views show them."""

import json
import math

import pytest
from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.profiler.session import bundled_profile
from linkroof.roofline.fits import fit, profile_fits

SIZES = [4 ** k for k in range(2, 15)]


def test_an_alpha_beta_sweep_is_recovered_exactly():
    f = fit("x", [(s, 8e-6 + s / 300e9) for s in SIZES])
    (seg,) = f.segments
    assert seg.latency_s == pytest.approx(8e-6, rel=1e-6) and seg.bandwidth_bytes_per_s == pytest.approx(300e9, rel=1e-6)
    assert f.worst_error < 1e-9


def test_a_protocol_switch_is_fitted_piecewise_and_within_the_target():
    # small messages: 8 us + s / 100 GB/s; from 4 MiB: 25 us + s / 320 GB/s (another protocol)
    pts = [(s, 8e-6 + s / 100e9 if s < 4 << 20 else 25e-6 + s / 320e9) for s in SIZES]
    one = fit("x", pts, max_segments=1)
    two = fit("x", pts)
    assert one.worst_error > 0.10 and len(two.segments) == 2 and two.worst_error < 0.01
    assert two.segments[1].bandwidth_bytes_per_s == pytest.approx(320e9, rel=1e-3)


def test_every_fit_of_the_reference_states_its_worst_error():
    fits = profile_fits(bundled_profile())
    names = {f.name for f in fits}
    assert {"nccl all_reduce fp32", "nccl sendrecv fp32", "ce p2p_write", "tma p2p_read"} <= names
    assert all(math.isfinite(f.worst_error) and f.segments for f in fits)
    nccl = [f for f in fits if f.name.startswith("nccl")]
    assert max(f.worst_error for f in nccl) < 0.11  # collectives: within ~10 % with at most three segments


def test_cli_and_dashboard_show_the_fits(tmp_path):
    res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "roofline", "--profile", "reference",
                                   "--fits", "--json"])
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and all("worst_error" in f and f["segments"] for f in doc["fits"])
    text = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "roofline", "--profile", "reference",
                                    "--fits"]).output
    flat = " ".join(text.split())
    assert "Worst error" in text and "curve parameters, not link properties" in flat  # never shown as the link's own
    assert "not link properties" in doc["fits_note"]
    from linkroof.dashboard.figures import fits_figure

    fig = fits_figure(profile_fits(bundled_profile()))
    assert any("worst" in (t.name or "") for t in fig.data) and fig.layout.yaxis.type == "log"
    assert "curve parameters" in fig.layout.title.text
