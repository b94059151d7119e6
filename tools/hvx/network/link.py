"""Emit a model's hexagon_nn graph as C, compile it with the driver and link it with nnlib's whole library for
qemu-hexagon (issue 36). Symbols nothing in the build defines (libm and libc functions no graph reached so far)
become generated stubs that end the run naming the symbol, so a graph that needs one says so instead of
computing with a guess."""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import build_lib
import hvx_build

LDFLAGS = ["-Wl,--error-limit=0"]


def emit_graph(model: pathlib.Path, work: pathlib.Path, prefix: str,
               input_shapes: dict[str, tuple[int, ...]] | None = None, prepared: Any = None) -> pathlib.Path:
    """``hexnn-import MODEL --emit c --no-optimize [--input-shape NAME=DIMS]`` into ``work/prefix.c`` (and its
    header): the imported graph, which nnlib's own prepare then prepares on the device. With ``prepared`` (the
    project's prepared graph of the model, for a model whose prepare leaves prepare.c's on purpose:
    :func:`net.emits_prepared`), that graph as ``--emit c`` writes it (nnlib's prepare runs again over it); written
    from the caller's graph itself, so that the device's node ids are the engine's (the project's prepare numbers
    the nodes it makes differently from one process to another, with Python's string hashing)."""
    work.mkdir(parents=True, exist_ok=True)
    out = work / f"{prefix}.c"
    if prepared is not None:
        from hexnn_import.emit import emit_graph as emit
        emit(prepared, "c", out, source=str(model))
        return out
    shapes = [a for n, s in (input_shapes or {}).items() for a in ("--input-shape", f"{n}={','.join(map(str, s))}")]
    res = subprocess.run(["hexnn-import", str(model), "--emit", "c", "--no-optimize", *shapes, "-o", str(out)],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0 or not out.exists():
        raise hvx_build.BuildError(f"emitting {model.name} failed: {res.stderr[-2000:]}")
    return out


def _stub_file(work: pathlib.Path, names: list[str]) -> pathlib.Path:
    lines = ['#include "hvxrt.h"']
    for n in sorted(set(names)):
        lines.append(f'void {n}(void) {{ rt_fail("network build: {n} reached (a stub: no definition linked)", 9); }}')
    path = work / "stubs.c"
    path.write_text("\n".join(lines) + "\n")
    return path


def link(nnlib: pathlib.Path, work: pathlib.Path, graph_c: pathlib.Path, prefix: str,
         objects: list[pathlib.Path]) -> tuple[pathlib.Path, list[str]]:
    """Compile ``graph_c`` and the driver, link them with ``objects`` and the runtime; returns the executable and
    the names of the generated stubs."""
    exe = work / prefix
    base = ["clang", *build_lib.CFLAGS, *build_lib.includes(nnlib)]
    srcs = [str(graph_c), str(HERE / "driver.c"), str(hvx_build.RUNTIME / "hvxrt.c"),
            str(hvx_build.RUNTIME / "hvxmath.c")]
    cmd = [*base, f"-DGRAPH_BUILD={prefix}_build", *LDFLAGS, "-o", str(exe), *srcs, *map(str, objects)]
    stubs: list[str] = []
    for _ in range(2):
        res = subprocess.run(cmd + ([str(work / "stubs.c")] if stubs else []), capture_output=True, text=True,
                             check=False)
        if res.returncode == 0:
            return exe, stubs
        missing = re.findall(r"undefined symbol: (\S+)", res.stderr)
        if not missing or stubs:
            raise hvx_build.BuildError(f"linking {prefix} failed:\n{res.stderr[-4000:]}")
        stubs = sorted(set(missing))
        _stub_file(work, stubs)
    raise hvx_build.BuildError(f"linking {prefix} failed")
