"""`linkroof export`'s four formats through their tools' own loaders (CPU; no GPU needed):

- ParallelKernelBench: kernelgen/generate_kernel.py's `_hardware_context_body`, on its own
  kernelgen/prompts.toml with our [hardware_profiles.*] table merged in;
- KernelBench: src/kernelbench/prompt_constructor_toml.py's `_gpu_context_from_gpu_specs`
  on our gpu_specs.py;
- TraceLens: TraceLens/Agent/Analysis/utils/arch_utils.py's `load_arch` finding our arch
  JSON through TL_EXTENSION, then analysis_utils' `_resolve_peak_maf` reading it.

The loader functions are taken from the tools' source files as they are (their modules
import model-API clients and torch at the top, so the functions are compiled from their
own source text, alone, with the standard library names they use).

    python3 benchmarks/export_loaders.py PKB_DIR KERNELBENCH_DIR TRACELENS_DIR OUT [PROFILE]

The three folders are checkouts (git archive of the fetched mirrors, kept git-ignored).
OUT gets the four exported files, each loader's output and loaders.json (pass/fail and
what was read)."""

import ast
import json
import os
import runpy
import subprocess
import sys
import tomllib
from pathlib import Path


def function_from(path: Path, name: str, env: dict) -> object:
    tree = ast.parse(path.read_text())
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    code = compile(ast.Module(body=[node], type_ignores=[]), str(path), "exec")
    exec(code, env)
    return env[name]


def commit(d: Path) -> str:
    try:
        return (d / ".commit").read_text().strip()
    except OSError:
        return subprocess.run(["git", "-C", str(d), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()


def main(pkb: str, kb: str, tl: str, out: str, which: str = "reference") -> int:
    from linkroof.profiler.session import resolve_profile
    from linkroof.roofline import export as E

    profile, _ = resolve_profile(which, None)
    out_d = Path(out)
    out_d.mkdir(parents=True, exist_ok=True)
    key = E.default_key(profile)
    files = E.write_all(profile, str(out_d), key)
    report: dict = {"profile": profile.id, "key": key, "files": [Path(f).name for f in files], "loaders": {}}

    # ParallelKernelBench
    from typing import Any

    pkb_d = Path(pkb)
    cfg = tomllib.loads((pkb_d / "kernelgen" / "prompts.toml").read_text())
    ours = tomllib.loads((out_d / "pkb_hardware_profile.toml").read_text())
    cfg.setdefault("hardware_profiles", {}).update(ours["hardware_profiles"])
    body_fn = function_from(pkb_d / "kernelgen" / "generate_kernel.py", "_hardware_context_body", {"Any": Any})
    pkb_key = next(iter(ours["hardware_profiles"]))
    text = body_fn(cfg, pkb_key)
    (out_d / "pkb_prompt_hardware.txt").write_text(text)
    report["loaders"]["pkb"] = {"source": "kernelgen/generate_kernel.py:_hardware_context_body", "commit": commit(pkb_d),
                                "ok": "The GPU that will run the kernel is NVIDIA H200" in text and "HBM:" in text,
                                "chars": len(text)}

    # KernelBench
    from typing import Dict

    kb_d = Path(kb)
    ctx_fn = function_from(kb_d / "src" / "kernelbench" / "prompt_constructor_toml.py", "_gpu_context_from_gpu_specs",
                           {"runpy": runpy, "Dict": Dict})
    ctx = ctx_fn(str(out_d / "gpu_specs.py"), key)
    (out_d / "kernelbench_gpu_context.json").write_text(json.dumps(ctx, indent=1))
    report["loaders"]["kernelbench"] = {
        "source": "src/kernelbench/prompt_constructor_toml.py:_gpu_context_from_gpu_specs", "commit": commit(kb_d),
        "ok": ctx["gpu_architecture"] == "Hopper" and "Memory Bandwidth" in ctx["gpu_specs_bullets"],
        "bullets": ctx["gpu_specs_bullets"].count("\n") + 1}

    # TraceLens: load_arch through TL_EXTENSION, then the roofline's peak lookup
    tl_d = Path(tl)
    ext = out_d / "tl_ext"
    arch_dir = ext / "lr_arch" / "Agent" / "Analysis" / "utils" / "arch"
    arch_dir.mkdir(parents=True, exist_ok=True)
    (ext / "lr_arch" / "__init__.py").write_text("")
    (arch_dir / f"{key}.json").write_text((out_d / f"{key}.json").read_text())
    sys.path.insert(0, str(ext))
    os.environ["TL_EXTENSION"] = "lr_arch"
    arch_mod = runpy.run_path(str(tl_d / "TraceLens" / "Agent" / "Analysis" / "utils" / "arch_utils.py"))
    arch = arch_mod["load_arch"](key)
    peak = function_from(tl_d / "TraceLens" / "Agent" / "Analysis" / "category_analyses" / "analysis_utils.py",
                         "_resolve_peak_maf", {})
    maf_bf16 = peak({"Compute Spec": "matrix_bf16"}, arch["max_achievable_tflops"], 0.0)
    report["loaders"]["tracelens"] = {
        "source": "utils/arch_utils.py:load_arch + category_analyses/analysis_utils.py:_resolve_peak_maf",
        "commit": commit(tl_d), "ok": arch["mem_bw_gbps"] > 0 and maf_bf16 > 0, "mem_bw_gbps": arch["mem_bw_gbps"],
        "peak_maf_matrix_bf16": maf_bf16, "listed": arch["name"] in arch_mod["list_platforms"]()}
    report["brief_bytes"] = len((out_d / "brief.txt").read_bytes())
    (out_d / "loaders.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    return 0 if all(v["ok"] for v in report["loaders"].values()) and report["brief_bytes"] < 2048 else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
