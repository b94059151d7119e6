"""Compile nnlib's whole graph library (hexagon_nn 2.14.1: every C source and assembly file of its own build lists)
for Hexagon v66 with 128-byte HVX, for whole networks under ``qemu-hexagon`` (issue 36).

What is compiled follows nnlib's build: the C files of ``hexagon/hexagon_nn_c_srcs.txt`` (graph API, prepare.c,
every op's ``check()`` / ``execute()``, ``optab.c``), the assembly of ``hexagon/hexagon_nn_asm_srcs.txt`` plus the
five v66 kernels ``hexagon/nonfastrpc.mak`` adds for ``V66`` (with its ``-DFAST_16B_CONV``), all unedited, with the
flags of ``tools/hvx/hvx_build.py`` (``-mv66 -DV66=1 -DHEXAGON_V66=1 -DUSE_OS_LINUX``). Left out, each replaced by
our stand-in in ``standin/``: ``src/nn_os.c`` (worker threads; ``standin/net_os.c`` runs each work item at once).
``gvconv2dbbb_h_v66.S`` is in no build list. Objects are cached in the work folder by source time, in a folder
tagged by the flags and our stand-in headers (:func:`cache_tag`).
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import os
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
HVX = HERE.parent
sys.path.insert(0, str(HVX))
import hvx_build

#: nnlib sources left out (the stand-in that replaces each is named in the module docstring).
LEFT_OUT = {"hexagon/src/nn_os.c"}
#: Assembly nnlib's V66 build adds (hexagon/nonfastrpc.mak, ``ifdef V66``).
ASM_V66 = ["hexagon/asm_src/gvconv2dbbb_d32_h_v66.S", "hexagon/asm_src/gvconv2dbbb_d32_s1f_h_v66.S",
           "hexagon/asm_src/gvconv2dbbb_d16_s1f_h_v66.S", "hexagon/asm_src/gvconv2dbbbs1x4_d32_h_v66.S",
           "hexagon/asm_src/gvconv2db2b2b2_d32_h_v66.S"]
#: clang's Hexagon back end calls compiler-rt's register save / restore routines (``__save_r16_through_r27``, ...)
#: from functions that save many callee-saved registers or are optimised for size; none is linked here, so the
#: thresholds are raised past any function's count and every prologue / epilogue saves its registers inline.
CFLAGS = [*hvx_build.CFLAGS, "-mllvm", "-spill-func-threshold=100", "-mllvm", "-spill-func-threshold-Os=100"]
#: Our stand-ins compiled with the library.
STANDINS = ["net_os.c", "net_libc.c"]


def includes(nnlib: pathlib.Path) -> list[str]:
    """Include path: our network stand-ins, the op harnesses' OS stand-ins, their libc stand-ins, the runtime,
    then nnlib's own headers."""
    dirs = [HERE / "include", HVX / "include_os", hvx_build.STANDIN, hvx_build.RUNTIME,
            nnlib / "hexagon" / "include", nnlib / "interface"]
    return [a for d in dirs for a in ("-I", str(d))]


def sources(nnlib: pathlib.Path) -> tuple[list[str], list[str]]:
    """(C sources, assembly sources) of nnlib's V66 build, relative to the checkout, without ``LEFT_OUT``."""
    c_list = (nnlib / "hexagon/hexagon_nn_c_srcs.txt").read_text()
    asm_list = (nnlib / "hexagon/hexagon_nn_asm_srcs.txt").read_text()
    c_srcs = sorted(set(re.findall(r"hexagon/\S+\.c", c_list)) - LEFT_OUT)
    asm = list(dict.fromkeys(re.findall(r"hexagon/\S+\.S", asm_list) + ASM_V66))
    return c_srcs, asm


def cache_tag() -> str:
    """The object folder's tag: the flags and the text of our stand-in headers (a header edit, e.g. a prototype
    added to ``include/math.h``, changes what an unchanged nnlib source compiles to, so it must not reuse objects)."""
    h = hashlib.sha1(" ".join(CFLAGS).encode())
    for d in (HERE / "include", HVX / "include_os", hvx_build.STANDIN, hvx_build.RUNTIME):
        for f in sorted(pathlib.Path(d).rglob("*.h")):
            h.update(str(f.relative_to(d)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:8]


def _compile(cmd: list[str], obj: pathlib.Path) -> str | None:
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        obj.unlink(missing_ok=True)
        return f"{' '.join(cmd)}\n{res.stderr[-3000:]}"
    return None


def build_objects(nnlib: pathlib.Path, work: pathlib.Path, jobs: int = 2) -> list[pathlib.Path]:
    """Compile every source into ``work/obj`` (skipping objects newer than their source); returns the objects.
    A failing compile raises :class:`hvx_build.BuildError` naming each failing file."""
    flags_tag = cache_tag()
    obj_dir = work / f"obj_{flags_tag}"
    obj_dir.mkdir(parents=True, exist_ok=True)
    c_srcs, asm = sources(nnlib)
    base = ["clang", *CFLAGS, *includes(nnlib), "-c"]
    jobs_list = []
    for rel in c_srcs:
        extra = ["-include", "hxnet_qurt.h"] if rel.endswith("src/interface.c") else []
        jobs_list.append((nnlib / rel, [*base, *extra], obj_dir / (rel.replace("/", "_")[:-2] + ".o")))
    for rel in asm:
        jobs_list.append((nnlib / rel, [*base, "-DFAST_16B_CONV"], obj_dir / (rel.replace("/", "_")[:-2] + ".o")))
    for name in STANDINS:
        jobs_list.append((HERE / "standin" / name, base, obj_dir / f"standin_{name[:-2]}.o"))
    todo = [(src, [*cmd, str(src), "-o", str(obj)], obj) for src, cmd, obj in jobs_list
            if not obj.exists() or obj.stat().st_mtime < src.stat().st_mtime]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        errors = [e for e in pool.map(lambda t: _compile(t[1], t[2]), todo) if e]
    if errors:
        raise hvx_build.BuildError(f"{len(errors)} of {len(todo)} compiles failed:\n" + "\n".join(errors[:6]))
    return [obj for _, _, obj in jobs_list]


if __name__ == "__main__":
    objs = build_objects(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(os.environ.get("JOBS", "2")))
    print(len(objs), "objects")
