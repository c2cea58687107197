"""Dashboard speed on a synthetic 64-GPU NVSwitch profile (4,032 ordered pairs, the most a recording may hold, full
sweeps) and a store of 1,000 profiles, measured in headless Chromium: each page's
first render and page switches; and `linkroof report` time and size.

    python benchmarks/dashboard_perf.py [--profiles 1000] [--gpus 64]
"""

import argparse
import dataclasses
import json
import random
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))

import fakes  # noqa: E402
from linkroof.dashboard import app as A  # noqa: E402
from linkroof.dashboard import report as R  # noqa: E402
from linkroof.profiler.environment import collect_environment  # noqa: E402
from linkroof.profiler.probe import probe_source  # noqa: E402
from linkroof.profiler.recording import replay_source  # noqa: E402
from linkroof.profiler.session import make_profile  # noqa: E402
from linkroof.schema import BenchSpec, Measurement  # noqa: E402
from linkroof.store import Store  # noqa: E402


def nvswitch_box(n: int) -> fakes.Scenario:
    s = fakes.Scenario(hostname=f"nvl{n}", nodes={0: "0-71", 1: "72-143"})
    for g in range(n):
        s.gpu(name="NVIDIA GB200", bus_id=f"0000{g // 4:04x}:{g % 4 + 1:02x}:00.0",
              path=f"/sys/devices/pci{g // 4:04x}:00/{g // 4:04x}:00:01.0/{g // 4:04x}:{g % 4 + 1:02x}:00.0",
              cc=(10, 0), cores=18432, memory=186 << 30, bus_width=8192, sm_clock=1965, mem_clock=3996,
              pcie=(6, 16), affinity=list(range(72)) if g < n // 2 else list(range(72, 144)), numa=g * 2 // n,
              arch=10, nvlinks=[{"state": 1, "version": 7, "remote_type": 2}] * 18, speed=53125)
    for a in range(n):
        for b in range(a + 1, n):
            s.pair(a, b, level=50 if (a * 2 // n) != (b * 2 // n) else 40)
    return s


def synthetic_profile(n: int):
    topo = probe_source(replay_source(nvswitch_box(n).recording(), f"synthetic-{n}"))
    rng = random.Random(1)
    ms = []

    def add(name, mech, pattern, devs, size, bw, **params):
        t = size / bw
        ms.append(Measurement(BenchSpec(name, mech, pattern, devs, size, 5, params=params),
                              tuple(t * (1 + rng.uniform(-0.003, 0.003)) for _ in range(5)), size,
                              "bytes copied", True))
    for a in range(n):
        for b in range(n):
            if a != b:
                add("p2p_write_bandwidth", "ce", "p2p_write", (a, b), 1 << 30, 790e9 * rng.uniform(0.97, 1.0))
    for mech in ("ce", "sm", "tma"):
        for k in range(2, 31):
            size = 1 << k
            add("p2p_write_bandwidth", mech, "p2p_write", (0, 1), size, 780e9 * size / (size + 2 ** 20), sweep=True)
    for blocks in (16, 33, 66, 132, 264, 528):
        add("p2p_read_bandwidth", "sm", "p2p_read", (0, 1), 1 << 29, 760e9 * min(1, blocks / 100), blocks=blocks)
    return make_profile([topo], [collect_environment()], ms, label=f"synthetic {n} GPUs")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profiles", type=int, default=1000)
    ap.add_argument("--gpus", type=int, default=64)  # the most GPUs a recording may hold
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    t0 = time.perf_counter()
    big = synthetic_profile(args.gpus)
    store = tmp / "s.sqlite"
    small = synthetic_profile(2)
    with Store(store) as s:
        s.put(big)
        for i in range(args.profiles - 1):
            s.put(dataclasses.replace(small, id=f"{small.id}-{i:04d}"))
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    html = R.report_html(big)
    report_s = time.perf_counter() - t0
    (tmp / "report.html").write_text(html)

    from playwright.sync_api import sync_playwright
    from werkzeug.serving import make_server

    app = A.create_app(str(store), big)
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    srv = make_server("127.0.0.1", port, app.server, threaded=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    charts = {"/": 1, "/topology": 1, "/bandwidth": 3, "/collectives": 0, "/roofline": 1, "/trace": 0, "/runs": 0}  # no NCCL in it
    # drawn: the page's charts, and its tables (ag-grid's or plain) or its note of what is missing
    ready = ("(n) => document.querySelectorAll('#page-content .js-plotly-plot').length >= n && "
             "document.querySelectorAll('#page-content table, #page-content .ag-root, #page-content .missing, "
             "#page-content .js-plotly-plot').length > 0 && !document.querySelector('._dash-loading')")
    first, switch = {}, {}
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                              args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        for path, n in charts.items():
            print("page", path, file=sys.stderr, flush=True)
            page = b.new_page(viewport={"width": 1400, "height": 1000})
            t = time.perf_counter()
            page.goto(f"http://127.0.0.1:{port}{path}")
            page.wait_for_function(ready, arg=n, timeout=60000)
            first[path] = time.perf_counter() - t
            page.close()
        page = b.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_function(ready, arg=1, timeout=60000)
        for path, n in list(charts.items())[1:] + [("/", 1)]:
            label = dict(A.PAGES)[path]
            t = time.perf_counter()
            page.click(f"text={label}")
            page.wait_for_function(f"location.pathname === '{path}'")
            page.wait_for_function(ready, arg=n, timeout=60000)
            switch[path] = time.perf_counter() - t
        b.close()
    srv.shutdown()
    print(json.dumps({"gpus": args.gpus, "pairs": args.gpus * (args.gpus - 1), "measurements": len(big.measurements),
                      "store_profiles": args.profiles, "setup_s": round(setup, 1),
                      "first_render_s": {k: round(v, 2) for k, v in first.items()},
                      "switch_s": {k: round(v, 2) for k, v in switch.items()},
                      "report_s": round(report_s, 2), "report_mb": round(len(html) / 1e6, 1)}, indent=1))


if __name__ == "__main__":
    main()
