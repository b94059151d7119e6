"""Golden cases of XMOS lib_nn's own C kernels, for tests/xs3/test_libnn_golden.py.

    python tools/golden_libnn.py ORACLE_LIBNN_DIR [--out tests/data/golden/libnn] [--seed 1]

``ORACLE_LIBNN_DIR`` is the lib_nn oracle folder (``src/lib_nn``: lib_nn
commit 96bd67c, ``harness/shim.c``, ``harness/make_patched.sh``). It is copied
to a temporary folder and built twice with gcc as its own scripts do
(``-O1 -fPIC -fwrapv -DNN_USE_REF``, the portable C kernels):

- pristine: lib_nn as it is;
- patched: ``make_patched.sh``, VLSAT's rounding add done in int64 (the
  upstream int32 ``acc + (1 << (s - 1))`` overflows near 2**31 - 1).

The expected outputs are the patched build's; each case records in
``pristine_equal`` whether the pristine build gives the same (it differs only
where its int32 rounding add overflows). Nothing of lib_nn is written: the
files hold inputs, kernel-layout weights, BSO tensors, window parameters and
the C's outputs.

Cases, per kernel (conv2d_deep, conv2d_shallowin, conv2d_1x1,
conv2d_depthwise, fully_connected_8, fully_connected_16):

- random BSO modes ``full`` (every field over its 16-bit range, shift2 8..31),
  ``full0`` (shift2 0..31), ``real`` (from TFLite-like quantization), ``nz``
  (small shifts and biases: where a "never zero" rule would act);
- saturating modes ``sat``, ``satx`` (accumulators pushed to ±2**31) and
  ``satpad`` (satx with windows padded above and below) for conv2d_deep,
  conv2d_shallowin and conv2d_1x1, whose C saturates step by step
  (conv2d_depthwise's C accumulates in wrapping int32, the fully-connected
  C sums exactly and saturates once: not the VPU's steps, so no golden
  saturating cases for them);
- ``model``: a few layers of the bundled int8 models as the project lowers
  them, on random int8 inputs.

Output: one ``<kernel>.npz`` per kernel (``np.savez_compressed``); case ``i``
has arrays ``i/x``, ``i/k``, ``i/bso``, ``i/y`` and ``i/meta`` (a JSON
string: mode, zero point, window, output size, source, ``pristine_equal``,
``order_sensitive``), plus ``README.md``.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from golden_libnn_cases import KERNELS, model_cases, random_cases  # noqa: E402
from golden_libnn_lib import LibNN, golden_parser  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GCC_FLAGS = ["-O1", "-fPIC", "-fwrapv", "-DNN_USE_REF"]


def build(src_root: Path, harness: Path, out: Path) -> Path:
    """``liblibnn_ref.so`` of lib_nn's portable C in ``src_root/lib_nn`` plus the oracle's shim."""
    lib = src_root / "lib_nn"
    sources = sorted((lib / "src/c").glob("*.c")) + sorted((lib / "src/c/util").glob("*/*.c"))
    sources += [lib / "src/asm/asm_constants.c", harness / "shim.c"]
    out.mkdir(parents=True, exist_ok=True)
    objs = []
    for src in sources:
        obj = out / f"{src.stem}.o"
        subprocess.run(["gcc", "-c", *GCC_FLAGS, f"-I{lib}/api", f"-I{lib}/src", f"-I{lib}/src/asm", str(src),
                        "-o", str(obj)], check=True, capture_output=True)
        objs.append(str(obj))
    so = out / "liblibnn_ref.so"
    subprocess.run(["gcc", "-shared", "-o", str(so), *objs, "-lm"], check=True)
    return so


def build_copy(oracle: Path, work: Path, extra_shim: Path | None = None) -> tuple[Path, Path, Path]:
    """Copy the oracle to ``work/libnn`` (``extra_shim``'s entry points appended to the harness shim), make the
    patched sources, build both; returns ``(copy, patched .so, pristine .so)``."""
    copy = work / "libnn"
    shutil.copytree(oracle, copy, ignore=shutil.ignore_patterns("build*", "src_patched", "export_*", "results_*"))
    if extra_shim is not None:
        shim = copy / "harness/shim.c"
        shim.write_text(shim.read_text() + f"\n// ---- tools/{extra_shim.name} ----\n" + extra_shim.read_text())
    subprocess.run(["bash", str(copy / "harness/make_patched.sh")], check=True, capture_output=True)
    pristine = build(copy / "src", copy / "harness", work / "build")
    patched = build(copy / "src_patched", copy / "harness", work / "build_patched")
    return copy, patched, pristine


def build_both(oracle: Path, work: Path) -> tuple[LibNN, LibNN]:
    """(patched, pristine) builds of the oracle's lib_nn in a copy under ``work``."""
    _, patched, pristine = build_copy(oracle, work)
    return LibNN(patched), LibNN(pristine)


def write_kernel(path: Path, cases: list[dict], patched: LibNN, pristine: LibNN) -> int:
    """Run every case through both builds and write ``<kernel>.npz``; returns the number of cases."""
    arrays: dict[str, np.ndarray] = {}
    for i, case in enumerate(cases):
        y = patched.run(case)
        meta = dict(case["meta"], pristine_equal=bool(np.array_equal(y, pristine.run(case))))
        arrays.update({f"{i}/x": case["x"], f"{i}/k": case["k"], f"{i}/bso": case["bso"], f"{i}/y": y,
                       f"{i}/meta": np.array(json.dumps(meta, sort_keys=True))})
    np.savez_compressed(path, **arrays)
    return len(cases)


README = """# Golden cases of lib_nn's C kernels

Written by `tools/golden_libnn.py` (run it again to regenerate: `python tools/golden_libnn.py
<lib_nn oracle folder>`). Expected outputs come from XMOS lib_nn commit 96bd67c's portable C
(`-DNN_USE_REF`, gcc `-O1 -fwrapv`) with VLSAT's rounding add made exact (int64); `pristine_equal`
says whether unmodified lib_nn gives the same. Inputs, kernel-layout weights, BSO tensors and
window parameters are data for `tests/xs3/test_libnn_golden.py`; no lib_nn code is stored here.

One `<kernel>.npz` per kernel; case `i`: `i/x` input, `i/k` weights (kernel layout), `i/bso`
(int16 `(groups, 7, 16)`), `i/y` lib_nn's output, `i/meta` JSON (mode, zero point, window, output
size, source, `pristine_equal`, `order_sensitive`).

| kernel | cases | by mode |
|---|---|---|
"""


def main() -> None:
    ap = golden_parser(__doc__)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        patched, pristine = build_both(a.oracle.resolve(), Path(tmp))
        models = model_cases(ROOT / "models", rng)
        for kernel in KERNELS:
            cases = random_cases(kernel, rng, a.per_mode) + models.get(kernel, [])
            n = write_kernel(a.out / f"{kernel}.npz", cases, patched, pristine)
            modes: dict[str, int] = {}
            for c in cases:
                modes[c["meta"]["mode"]] = modes.get(c["meta"]["mode"], 0) + 1
            rows.append(f"| {kernel} | {n} | {', '.join(f'{m} {k}' for m, k in modes.items())} |")
            print(f"{kernel}: {n} cases -> {a.out / (kernel + '.npz')}")
    readme = a.out / "README.md"
    old = readme.read_text() if readme.exists() else ""
    kept = old[old.find("\n## "):] if "\n## " in old else ""  # the other tools' sections stay
    readme.write_text(README + "\n".join(rows) + "\n" + kept)


if __name__ == "__main__":
    main()
