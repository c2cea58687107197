"""Loading and calling the user's code for `linkroof compare`: 'module:function' or
'file.py:function', the arrays in its arguments, its outputs as NumPy."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import LinkroofError


class CompareError(LinkroofError):
    """A callable cannot be found, called or checked; the message says which."""


def resolve(spec: str) -> Callable[..., Any]:
    """'pkg.module:function' or 'path/to/file.py:function' -> the function."""
    if ":" not in spec:
        raise CompareError(f"{spec!r}: expected module:function or file.py:function")
    target, name = spec.rsplit(":", 1)
    try:
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_file():
                raise CompareError(f"{spec}: no file {target}")
            module_spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[path.stem] = module
            module_spec.loader.exec_module(module)
        else:
            if "" not in sys.path and "." not in sys.path:
                sys.path.insert(0, "")  # the user's working directory, as python -c does
            module = importlib.import_module(target)
    except CompareError:
        raise
    except Exception as e:  # noqa: BLE001 - any import failure is the user's to see, in one line
        raise CompareError(f"{spec}: cannot import {target} ({type(e).__name__}: {e})") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise CompareError(f"{spec}: {target} has no callable {name!r}")
    return fn


def arrays(obj: Any) -> list[Any]:
    """Array-likes (CuPy, PyTorch, NumPy) found in nested args."""
    if hasattr(obj, "nbytes") and hasattr(obj, "shape"):
        return [obj]
    if isinstance(obj, dict):
        return [a for v in obj.values() for a in arrays(v)]
    if isinstance(obj, (list, tuple)):
        return [a for v in obj for a in arrays(v)]
    return []


def input_bytes(args: Any) -> int:
    return int(sum(int(a.nbytes) for a in arrays(args)))


def call(fn: Callable[..., Any], args: Any) -> Any:
    """fn(*args) for a tuple or list, fn(**args) for a dict, else fn(args)."""
    if isinstance(args, dict):
        return fn(**args)
    if isinstance(args, (list, tuple)):
        return fn(*args)
    return fn(args)


def to_numpy(x: Any) -> Any:
    """An output as a NumPy array to compare with the reference's. Data types NumPy has
    no arithmetic for (torch's bfloat16 and float8 types; CuPy arrays of ml_dtypes'
    bfloat16 / float8, which NumPy sees as opaque) are widened to float32, which holds
    every one of their values exactly."""
    import numpy as np

    if hasattr(x, "detach"):  # torch
        t = x.detach()
        name = str(t.dtype).replace("torch.", "")
        if name == "bfloat16" or name.startswith("float8") or name.startswith("float4"):
            t = t.float()
        return t.cpu().numpy()
    a = x.get() if hasattr(x, "get") else np.asarray(x)  # cupy, or anything array-like
    if a.dtype.kind not in "biufcM" and a.dtype.kind != "m":  # ml_dtypes' bfloat16 / float8: kind 'V'
        try:
            a = a.astype(np.float32)
        except (TypeError, ValueError):
            raise CompareError(f"cannot compare outputs of data type {a.dtype}: NumPy cannot widen it to "
                               "float32") from None
    return a


def framework_of(args: Any) -> str:
    """'torch' when any input is a PyTorch tensor, else 'cupy'."""
    if any(type(a).__module__.startswith("torch") for a in arrays(args)):
        return "torch"
    return "cupy"
