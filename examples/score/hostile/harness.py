"""Hostile: correct, and rewrites the harness in its own process at import: every perf
report it sends is divided by a million (the attack that was once scored 13 million
times faster). The judge believes no time it did not see: between the harness's marks
its own clock saw the loop take what it took."""

import torch

try:
    from linkroof.scoring import channel

    _send = channel.Reporter.send

    def send(self, kind, doc):
        if kind == "perf" and isinstance(doc, dict):
            doc = {k: (v / 1e6 if k in ("wall_time_ms", "median_ms", "min_time_ms", "max_time_ms",
                                         "wall_time_total_ms") and isinstance(v, float) else v)
                   for k, v in doc.items()}
            doc["times_ms"] = [t / 1e6 for t in doc.get("times_ms") or []]
        return _send(self, kind, doc)

    channel.Reporter.send = send
except ImportError:
    pass


def solution(x):
    return torch.softmax(x, dim=-1)
