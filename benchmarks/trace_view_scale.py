"""The Trace page at scale: RANKS rank traces of STEPS steps each (one all-reduce a
step, with its Seq, and two GEMMs: RANKS x STEPS collectives), read as the dashboard
reads them, then timed in this process: the report (analysis and matching, once per
traces and profile), the page's first render (its layout built and serialised to the
JSON the browser receives), a zoom's redraw, and one page of the collectives table.
Issue 30's target: 64 ranks and 100 k collectives, first render under 3 s.

    python3 benchmarks/trace_view_scale.py [RANKS] [STEPS]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))


def main() -> None:
    import plotly

    from linkroof.dashboard import app as A
    from linkroof.readers.traces import read_job
    from trace_speed import generate

    ranks = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 1563
    with tempfile.TemporaryDirectory() as d:
        files = []
        one = Path(d) / "probe.json"
        generate(one, 200_000, gemms=2)
        per_step = one.stat().st_size / max(1, _steps(one))
        for r in range(ranks):
            p = Path(d) / f"rank{r}.json"
            generate(p, int(per_step * steps), rank=r, world=ranks, gemms=2)
            files.append(str(p))
        t0 = time.perf_counter()
        traces = read_job(files)
        read_s = time.perf_counter() - t0
    data = A.Data(None, None, None, traces)
    t0 = time.perf_counter()
    report = data.trace_report("reference")
    report_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    view = A.trace_view(data, "reference")
    body = json.dumps(view, cls=plotly.utils.PlotlyJSONEncoder)
    render_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    fig = A.trace_zoom({"xaxis.range[0]": 1000.0, "xaxis.range[1]": 6000.0}, "reference", data)
    zoom_body = fig.to_json()
    zoom_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    page = A.page_rows({"startRow": 0, "endRow": 60, "sortModel": [{"colId": "duration_us", "sort": "desc"}]},
                       A.Id.TRACE_TABLE.value, data)
    page_s = time.perf_counter() - t0
    print(json.dumps({"ranks": ranks, "collectives": len(report.rows), "matched": len(report.matched),
                      "activities": sum(len(t.activities) for t in traces), "read_s": read_s,
                      "report_s": report_s, "first_render_s": render_s, "first_render_bytes": len(body),
                      "zoom_s": zoom_s, "zoom_bytes": len(zoom_body), "sorted_page_s": page_s,
                      "page_rows": len(page["rowData"]), "cores": os.cpu_count()}))


def _steps(p: Path) -> int:
    return p.read_text().count("ProfilerStep#")


if __name__ == "__main__":
    main()
