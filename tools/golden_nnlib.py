"""Golden cases from hexagon_nn's own C code (issue 19): build the nnlib oracle harness, run it, keep what the C computed.

The oracle (``oracles/nnlib``: hexagon_nn 2.14.1 sources and a harness that extracts their portable C
paths verbatim and compiles them with gcc) is not part of the project. This script copies it to a work
folder, adds the project's own harness rows (``tools/nnlib_ext/``: which nnlib functions to compile for
each further op, the comparison loops, hand-written models of HVX-only code; no vendor code), builds
it, runs every comparison, and records each case the C code answered: the inputs and parameters given
to ``run_op`` and the C outputs (codes and output min/max). Tests replay them
(``tests/ops/test_nnlib_golden.py``) so the suite needs neither the oracle nor gcc.

    python tools/golden_nnlib.py --oracle ../shared/oracles/nnlib -n 200           # report only
    python tools/golden_nnlib.py --oracle ../shared/oracles/nnlib -n 200 --write   # and write tests/data/golden/nnlib/
    python tools/golden_nnlib.py --oracle ... --work /tmp/h1 --only Requantize     # a private build folder; rows by regex
    python tools/golden_nnlib.py --summarize    # replay the golden files, write ops/verified_data.py (ops --json)
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXT = ROOT / "tools" / "nnlib_ext"
OUT = ROOT / "tests" / "data" / "golden" / "nnlib"

#: The recorder, inserted into the harness's compare.py (its ``proj`` and ``Stat.add`` / ``cmp3``).
RECORDER = r'''
import os as _os, json as _json, re as _re
_GOLD = _os.environ.get("HEXNN_GOLDEN_DIR")
_ONLY = _re.compile(_os.environ.get("HEXNN_GOLDEN_ONLY", ""))
_LAST = {}
_CASES = {}
_GROUPS = {}
_KEEP = []
def _gold_proj(op, ins, kw, p):
    _LAST.clear(); _LAST.update(op=op, ins=[np.array(a) for a in ins], kw=dict(kw), p=p)
def _jsonable(v):
    if isinstance(v, (np.integer,)): return int(v)
    if isinstance(v, (np.floating,)): return float(v)
    return v
def _gold_add(name, q_c, rc, mapping=None):
    if not _GOLD or not _LAST or not _ONLY.search(name): return
    op, ins, kw, p = _LAST["op"], _LAST["ins"], dict(_LAST["kw"]), _LAST["p"]
    _LAST.clear()
    group = None
    if "state" in kw:
        st = kw.pop("state")
        if st is not None:  # the dict is kept alive: a freed dict's id would be reused by the next case's state
            _KEEP.append(st); group = _GROUPS.setdefault(id(st), len(_GROUPS))
    try: _json.dumps({k: _jsonable(v) for k, v in kw.items()})
    except TypeError: return
    q_c = np.asarray(q_c); rc = [float(x) for x in rc]
    if mapping is None:
        if isinstance(p, Exception): return
        outs = [np.asarray(o) for o in p]
        code_idx = -1
        if q_c.size:
            for k, o in enumerate(outs):
                if o.size == q_c.size and np.array_equal(o.reshape(-1), np.asarray(_LAST_QP[0]).reshape(-1)):
                    code_idx = k; break
            if code_idx < 0: return
        used = {code_idx}; range_idx = []
        for v in _LAST_QP[1]:
            for j, o in enumerate(outs):
                if j not in used and o.size == 1 and (float(o.reshape(-1)[0]) == float(v) or (np.isnan(float(v)) and np.isnan(float(o.reshape(-1)[0])))):
                    used.add(j); range_idx.append(j); break
            else: return
    else:
        code_idx, range_idx = mapping
    _CASES.setdefault(name, []).append(dict(op=op, ins=ins, kw={k: _jsonable(v) for k, v in kw.items()}, group=group,
        codes=q_c.reshape(-1), range=np.array(rc, np.float32), code_idx=code_idx, range_idx=range_idx))
_LAST_QP = [None, None]
def _gold_dump():
    if not _GOLD: return
    _os.makedirs(_GOLD, exist_ok=True)
    for name, cases in _CASES.items():
        arrays = {}; meta = []
        for i, c in enumerate(cases):
            for k, a in enumerate(c["ins"]): arrays[f"c{i}_in{k}"] = a
            arrays[f"c{i}_codes"] = c["codes"]; arrays[f"c{i}_range"] = c["range"]
            meta.append(dict(op=c["op"], kw=c["kw"], group=c["group"], n_in=len(c["ins"]), code_idx=c["code_idx"], range_idx=c["range_idx"]))
        slug = _re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")
        np.savez(_os.path.join(_GOLD, slug + ".npz"), meta=np.array(_json.dumps(dict(row=name, cases=meta))), **arrays)
'''


def patch_compare(text: str) -> str:
    """The harness's compare.py with the recorder wired in (fails loudly if the harness changed shape)."""
    subs = [
        ("def proj(op, ins, **kw):\n    try: return run_op(op, ins, **kw)\n    except Exception as e: return e\n",
         "def proj(op, ins, **kw):\n    try: _p = run_op(op, ins, **kw)\n    except Exception as e: _p = e\n"
         "    _gold_proj(op, ins, kw, _p)\n    return _p\n"),
        ("    def add(s, q_c, q_p, rc, rp, desc):\n        s.cases += 1\n",
         "    def add(s, q_c, q_p, rc, rp, desc):\n        _LAST_QP[0], _LAST_QP[1] = q_p, rp; _gold_add(s.name, q_c, rc)\n"
         "        s.cases += 1\n"),
        ("            if rc: st.c_err += 1\n            else: st.proj_err += 1\n",
         "            if rc: st.c_err += 1\n            else:\n                st.proj_err += 1\n"
         "                _gold_add(st.name, r[0], [x.item() for x in r[1:]], (0, list(range(1, len(r)))))\n"),
        ('json.dump(report, open(H / "report.json", "w"), indent=1)',
         'for _ext in sorted(H.glob("ext_compare_*.py")):\n    exec(compile(_ext.read_text(), str(_ext), "exec"))\n'
         '_gold_dump()\njson.dump(report, open(H / "report.json", "w"), indent=1)'),
    ]
    head, sep, rest = text.partition("report = {}\n")
    if not sep:
        raise SystemExit("compare.py: 'report = {}' not found; the harness changed shape")
    text = head + sep + RECORDER + rest
    for old, new in subs:
        if old not in text:
            raise SystemExit(f"compare.py: expected text not found, the harness changed shape:\n{old}")
        text = text.replace(old, new, 1)
    return text


def patch_build(text: str) -> str:
    """build.py with the project's extension rows (``ext_build_*.py``) compiled in before linking."""
    anchor = 'srcs = [str(p) for p in sorted(GEN.glob("*.c"))]'
    if anchor not in text:
        raise SystemExit("build.py: link step not found; the harness changed shape")
    if "ext_build_" in text:
        return text
    ext = ('for _ext in sorted(H.glob("ext_build_*.py")):\n'
           '    exec(compile(_ext.read_text(), str(_ext), "exec"))\n')
    return text.replace(anchor, ext + anchor, 1)


#: include/quantize.h ``flt_div_255``: the non-hexagon branch and the device's fused multiply-add in its place.
X86_DIV255 = "return (0x8.08081p-11f * x)  +  ( (-0xF.EFEFFp-36f) * x);"
DEVICE_DIV255 = "return fmaf(x, 0x8.08081p-11f, (-0xF.EFEFFp-36f) * x); /* hexnn: Q6_R_sfmpyacc_RR as on the device */"


def patch_device_arithmetic(nnlib: pathlib.Path) -> None:
    """Make the x86 build compute what the device computes where nnlib's portable branch differs on purpose:
    ``flt_div_255`` uses ``Q6_R_sfmpyacc_RR`` (a fused multiply-add) on Hexagon and two roundings elsewhere."""
    q = nnlib / "hexagon" / "include" / "quantize.h"
    text = q.read_text()
    if DEVICE_DIV255 not in text:
        if X86_DIV255 not in text:
            raise SystemExit(f"{q}: flt_div_255's portable branch not found; the sources changed")
        os.chmod(q, 0o644)
        q.write_text(text.replace(X86_DIV255, DEVICE_DIV255, 1))


def prepare_work(oracle: pathlib.Path, work: pathlib.Path, ext: str = "") -> pathlib.Path:
    """Copy the oracle (harness and sources) to ``work`` once, refresh the project's extension rows
    (those whose file name matches the regex ``ext``), patch."""
    if not (oracle / "harness" / "compare.py").is_file() or not (oracle / "nnlib" / "hexagon").is_dir():
        raise SystemExit(f"{oracle}: not an nnlib oracle folder (needs harness/compare.py and nnlib/hexagon)")
    if not (work / "nnlib" / "hexagon").is_dir():
        work.mkdir(parents=True, exist_ok=True)
        shutil.copytree(oracle / "nnlib", work / "nnlib", dirs_exist_ok=True)
    patch_device_arithmetic(work / "nnlib")
    h = work / "harness"
    shutil.copytree(oracle / "harness", h, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("gen", "libnnref.so", "report.json", "__pycache__"))
    for p in h.glob("ext_*.py"):
        p.unlink()
    if EXT.is_dir():
        for p in EXT.rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts and (re.search(ext, p.name) or "_00_common" in p.name):
                dst = h / p.relative_to(EXT)
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(p, dst)
    (h / "compare_golden.py").write_text(patch_compare((oracle / "harness" / "compare.py").read_text()))
    (h / "build.py").write_text(patch_build((h / "build.py").read_text()))
    for p in h.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return h


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--oracle", type=pathlib.Path, help="the oracles/nnlib folder")
    ap.add_argument("--summarize", action="store_true",
                    help="only replay tests/data/golden/nnlib through the engine and write ops/verified_data.py")
    ap.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/hexnn_nnlib_golden"),
                    help="build folder (the oracle is copied here)")
    ap.add_argument("-n", type=int, default=200, help="random cases per row")
    ap.add_argument("--only", default="", help="regex: rows to record (all rows are still compared)")
    ap.add_argument("--ext", default="", help="regex: only the extension files (tools/nnlib_ext/) whose name matches")
    ap.add_argument("--write", action="store_true", help="write tests/data/golden/nnlib/ (else report only)")
    ap.add_argument("--keep", type=int, default=24, help="cases kept per row (half the smallest, half at random)")
    args = ap.parse_args(argv)
    if args.summarize:
        summarize()
        return 0
    if args.oracle is None:
        ap.error("--oracle is required")
    h = prepare_work(args.oracle.resolve(), args.work.resolve(), args.ext)
    subprocess.check_call([sys.executable, "build.py"], cwd=h, stdout=subprocess.DEVNULL)
    raw = h / "golden_raw"
    shutil.rmtree(raw, ignore_errors=True)
    env = dict(os.environ, HEXNN_GOLDEN_DIR=str(raw), HEXNN_GOLDEN_ONLY=args.only)
    subprocess.check_call([sys.executable, "compare_golden.py", str(args.n)], cwd=h, env=env)
    report = json.loads((h / "report.json").read_text())
    if args.write:
        write_golden(raw, OUT, args.keep, re.compile(args.only))
    print(json.dumps({k: v.get("bit_exact_pct") for k, v in report.items()}, indent=1))
    return 0


def summarize(golden: pathlib.Path = OUT, dest: pathlib.Path = ROOT / "ops" / "verified_data.py") -> dict[str, list[int]]:
    """Replay every golden file; write the per-op ``(cases, exact)`` table that ``ops --json`` reports."""
    from hexnn_import.testing.golden import golden_ops, replay

    per_op: dict[str, list[int]] = {}
    for f in sorted(golden.glob("*.npz")):
        n, exact, _ = replay(f)
        for op in golden_ops(f):
            acc = per_op.setdefault(op, [0, 0])
            acc[0] += n
            acc[1] += exact
    text = dest.read_text()
    head, sep, tail = text.partition("NNLIB: dict[str, tuple[int, int]] = {")
    if not sep:
        raise SystemExit(f"{dest}: NNLIB table not found")
    body = "".join(f"    {op!r}: ({c}, {e}),\n" for op, (c, e) in sorted(per_op.items()))
    dest.write_text(head + sep + "\n" + body + "}" + tail.split("}", 1)[1])
    print(json.dumps(per_op, indent=1))
    return per_op


def write_golden(raw: pathlib.Path, out: pathlib.Path, keep: int, only: re.Pattern[str]) -> None:
    """Keep ``keep`` cases of each recorded row (whole state groups), compressed, in ``out``: half the smallest,
    half drawn at random (seeded) from the rest under 16 KB of inputs, so that larger configurations are
    represented too and the kept cases are not just the easy ones."""
    import numpy as np

    out.mkdir(parents=True, exist_ok=True)
    for f in sorted(raw.glob("*.npz")):
        z = np.load(f)
        meta = json.loads(str(z["meta"]))
        if not only.search(meta["row"]):
            continue
        cases = meta["cases"]
        size = [sum(z[f"c{i}_in{k}"].nbytes for k in range(c["n_in"])) for i, c in enumerate(cases)]
        groups: dict[object, list[int]] = {}
        for i, c in enumerate(cases):
            groups.setdefault(c["group"] if c["group"] is not None else ("single", i), []).append(i)
        order = sorted(groups.values(), key=lambda ix: sum(size[i] for i in ix))
        per = max(len(ix) for ix in order)  # cases per group (3 for the rows that run a node 3 times)
        n_groups = max(2, keep // per)
        small, rest = order[: n_groups // 2], [ix for ix in order[n_groups // 2:] if sum(size[i] for i in ix) < 16384]
        pick = np.random.default_rng(0).permutation(len(rest))[: n_groups - len(small)]
        chosen = sorted(i for ix in small + [rest[j] for j in sorted(pick)] for i in ix)
        arrays: dict[str, object] = {}
        new_meta = []
        for j, i in enumerate(chosen):
            c = cases[i]
            for k in range(c["n_in"]):
                arrays[f"c{j}_in{k}"] = z[f"c{i}_in{k}"]
            arrays[f"c{j}_codes"] = z[f"c{i}_codes"]
            arrays[f"c{j}_range"] = z[f"c{i}_range"]
            new_meta.append(c)
        np.savez_compressed(out / f.name, meta=np.array(json.dumps(dict(row=meta["row"], cases=new_meta))), **arrays)


if __name__ == "__main__":
    raise SystemExit(main())
