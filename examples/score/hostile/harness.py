"""Hostile: correct, and rewrites the harness in its own process at import: the JSON
encoder the result channel's module uses is replaced, so every perf report leaves with
its times divided by a million (the attack that was once scored 13 million times
faster, by replacing Reporter.send; the harness now holds its methods from before the
import, so this one goes a level deeper). The judge believes no time it did not see:
under PKB's protocol its own clock saw the loop take what it took (tampered); under
linkroof's, the time falls under the physical floor (suspect)."""

import json as _json
import types

import torch

try:
    from linkroof.scoring import channel

    def dumps(doc, *a, **k):
        if isinstance(doc, dict) and ("wall_time_ms" in doc or "median_ms" in doc):
            doc = {key: (v / 1e6 if isinstance(v, float) and key.endswith("_ms") else v) for key, v in doc.items()}
            doc["times_ms"] = [t / 1e6 for t in doc.get("times_ms") or []]
        return _json.dumps(doc, *a, **k)

    channel.json = types.SimpleNamespace(dumps=dumps, loads=_json.loads)
except ImportError:
    pass


def solution(x):
    return torch.softmax(x, dim=-1)
