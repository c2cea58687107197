"""The `linkroof` command. Each command parses, calls the library, renders; no logic here.
The commands live by group: machine.py (probe, run, bench, import, check), placing.py
(roofline, advise, compare, score, trace), views.py (dashboard, report), runs.py (the
store); common.py holds what they share."""

from __future__ import annotations

from . import loops, machine, placing, runs, views  # noqa: F401 - each registers its commands on `cli`
from .common import UserError, cli

__all__ = ["UserError", "cli", "main"]


def main() -> None:
    cli(prog_name="linkroof")
