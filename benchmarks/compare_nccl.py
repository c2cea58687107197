"""Compare NCCL figures (busbw at 512 MiB, 8 B time) between profiles (single process,
mpirun, torchrun) and against nccl-tests on the 2xH200 machine.

    python benchmarks/compare_nccl.py single.json mpi.json torchrun.json
"""

import sys

from linkroof.schema import Profile
from linkroof.store import load_profile_file

REF = {"all_reduce": 313.8, "all_gather": 255.7, "all_to_all": 294.3, "sendrecv": 355.6}


def figures(p: Profile) -> dict:
    out = {}
    for m in p.measurements:
        if m.spec.mechanism != "nccl" or m.spec.params.get("in_place") or m.spec.params.get("rank_time") == "this rank" \
                or m.spec.params.get("dtype", "fp32") != "fp32":
            continue  # fp32 out of place, as the reference; per rank: the merged slowest-rank figure is used
        if m.spec.message_bytes == 512 << 20:
            out[(m.spec.pattern, "busbw")] = m.busbw_bytes_per_s / 1e9
        if m.spec.message_bytes == 8 and m.spec.pattern == "all_reduce":
            out[("all_reduce", "8B us")] = m.median_s * 1e6
    return out


def main() -> None:
    profs = [(path, figures(load_profile_file(path))) for path in sys.argv[1:]]
    keys = sorted({k for _, f in profs for k in f})
    print("figure".ljust(26) + "".join(p.split("/")[-1][:18].ljust(20) for p, _ in profs) + "nccl-tests")
    for k in keys:
        ref = REF.get(k[0]) if k[1] == "busbw" else (13.2 if k == ("all_reduce", "8B us") else None)
        vals = [f.get(k) for _, f in profs]
        row = "".join((f"{v:8.2f}" if v is not None else "       -").ljust(20) for v in vals)
        base = vals[0]
        spread = max(abs(v - base) / base for v in vals if v is not None) if base else 0
        print(f"{k[0]} {k[1]}".ljust(26) + row + (f"{ref}" if ref else "") + f"   spread {spread:.1%}")


if __name__ == "__main__":
    main()
