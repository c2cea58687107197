"""Which plotly.js the pages load: plotly's cartesian bundle (1.5 MB, vendored under
assets/ from the plotly.js-cartesian-dist-min package, MIT licence, header kept) where
it matches the installed plotly's own plotly.js, else that full bundle (4.8 MB).

The pages draw only cartesian traces (scatter, bar, heatmap), and parsing 4.8 MB of
JavaScript was most of the first page's render on a 2-core machine (benchmarks/RESULTS.md,
"Dashboard and report speed"). Dash's dcc.Graph uses `window.Plotly` where a script
defined it, and fetches the full bundle only where none did."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

ASSETS = Path(__file__).parent / "assets"
BUNDLE = ASSETS / "plotly-cartesian.min.js"
IGNORE_BUNDLE = r"plotly-cartesian\.min\.js"  # Dash's assets_ignore, where the bundle does not fit
# the trace types the cartesian bundle holds (its README)
TRACE_TYPES = frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour", "image",
                         "pie", "scatter", "scatterternary", "violin"})


@lru_cache(maxsize=1)
def bundle_version() -> str | None:
    """The vendored bundle's plotly.js version, from its header; None where it is missing."""
    try:
        with BUNDLE.open("r", encoding="utf-8") as f:
            head = f.read(300)
    except OSError:
        return None
    m = re.search(r"plotly\.js \(cartesian - minified\) v(\d+\.\d+\.\d+)", head)
    return m.group(1) if m else None


def installed_version() -> str:
    import plotly.offline

    return plotly.offline.get_plotlyjs_version()


def fits(installed: str | None = None, vendored: str | None = None) -> bool:
    """The vendored bundle is used where its major.minor is the installed plotly's (figures
    made by plotly for one plotly.js read the same in another of that minor version)."""
    installed = installed_version() if installed is None else installed
    vendored = bundle_version() if vendored is None else vendored
    return vendored is not None and vendored.split(".")[:2] == installed.split(".")[:2]


def script() -> str:
    """One inline <script> defining window.Plotly, for a self-contained page."""
    if fits():
        code = BUNDLE.read_text(encoding="utf-8")
    else:
        import plotly.offline

        code = plotly.offline.get_plotlyjs()
    return f'<script type="text/javascript">window.PlotlyConfig = {{MathJaxConfig: "local"}};</script>' \
           f'<script type="text/javascript">{code}</script>'
