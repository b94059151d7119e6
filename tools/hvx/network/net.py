"""Run one model's whole hexagon_nn graph on the emulated DSP (issue 36): nnlib's graph API built for Hexagon
(``build_lib``), the project's emitted C graph linked with ``driver.c`` (``link``), executed by ``qemu-hexagon`` on
a list of input sets. The driver's byte protocol is described in ``driver.c``."""
from __future__ import annotations

import dataclasses
import pathlib
import re
import struct
import subprocess
import sys
import time
from typing import Any

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import build_lib
import hvx_build
import link


@dataclasses.dataclass
class Built:
    """A linked graph executable and what its header says about the graph's inputs and outputs."""

    exe: pathlib.Path
    prefix: str
    nodes: int
    in_shapes: list[tuple[int, ...]]
    in_elementsize: list[int]
    n_outputs: int
    stubs: list[str]


def prefix_of(model: pathlib.Path) -> str:
    return "g_" + re.sub(r"\W", "_", model.stem)


def _header(h: str, prefix: str) -> tuple[int, list[tuple[int, ...]], list[int], int]:
    up = prefix.upper()
    node_count = int(re.search(rf"#define {up}_NODE_COUNT (\d+)", h).group(1))
    n_in = int(re.search(rf"#define {up}_NN_INPUT_COUNT (\d+)", h).group(1))
    n_out = int(re.search(rf"#define {up}_NN_OUTPUT_COUNT (\d+)", h).group(1))
    slots = {int(m.group(1)): int(m.group(2)) for m in re.finditer(rf"#define {up}_INPUT(\d+)_SLOT (\d+)", h)}
    shapes, sizes = [()] * n_in, [1] * n_in
    for i, slot in slots.items():
        dims = re.search(rf"#define {up}_INPUT{i}_NN_SHAPE \{{([^}}]*)\}}", h).group(1)
        shapes[slot] = tuple(int(v) for v in dims.split(","))
        sizes[slot] = int(re.search(rf"#define {up}_INPUT{i}_NN_ELEMENTSIZE (\d+)", h).group(1))
    return node_count, shapes, sizes, n_out


#: the notes optimizer/bias_fit_chain.py writes for a conv chain the project keeps where prepare.c fuses it, and for
#: a run-time range it floors (bias_fit_floor: a shrink's or an AutoQuantize's, which prepare.c leaves unfloored)
KEPT_CHAIN = ": kept as "
FLOORED = ") floored at "


def emits_prepared(graph: Any) -> bool:
    """True when the project's prepared ``graph`` keeps a conv chain that prepare.c fuses, or floors a run-time
    range (its notes say so): a Supernode would refuse its bias on some input ("Final too big"), so the chain
    stays, its requantize reading the bias add's minimum through Minimum_f (bias_fit_chain.unfusable_tail), which
    prepare.c's try_make_supernode_flavored does not match; a floored range's min goes through Minimum_f too
    (bias_fit_floor). nnlib's prepare of the imported graph would fuse the chain and has no floor, so such a
    model is emitted prepared, as a user emits it, and nnlib's prepare runs again over that."""
    return any(KEPT_CHAIN in str(n) or FLOORED in str(n) for n in graph.meta.get("notes") or [])


def build(nnlib: pathlib.Path, work: pathlib.Path, model: pathlib.Path,
          input_shapes: dict[str, tuple[int, ...]] | None = None, prepared: Any = None) -> Built:
    """nnlib's library (cached), the model's emitted graph (imported, or ``prepared``: the project's prepared
    graph of it, for a model :func:`emits_prepared` names), the driver: linked for qemu-hexagon."""
    objects = build_lib.build_objects(nnlib, work)
    prefix = prefix_of(model)
    graph_c = link.emit_graph(model, work / prefix, prefix, input_shapes, prepared)
    exe, stubs = link.link(nnlib, work / prefix, graph_c, prefix, objects)
    nodes, shapes, sizes, n_out = _header(graph_c.with_suffix(".h").read_text(), prefix)
    return Built(exe, prefix, nodes, shapes, sizes, n_out, stubs)


def run(built: Built, runs: list[list[np.ndarray]], out_caps: list[int], timeout: float = 900,
        debug_level: int = 0, dump: pathlib.Path | None = None) -> tuple[list[dict], float, str]:
    """Execute the graph once per input set (one process: the graph is built and prepared once, node state
    carries from run to run as on the device). With ``dump`` (a path prefix), nnlib writes every node's outputs
    after it runs to ``<dump>_<node id hex>_<output>.dat`` (give one run). Returns per run ``{"rc", "outputs": [(shape, bytes)]}``, the
    wall time of the process and its stderr."""
    head = struct.pack("<6i", len(built.in_shapes), len(out_caps), len(runs), 0, debug_level, int(dump is not None))
    if dump is not None:
        head += str(dump).encode().ljust(256, b"\0")[:255] + b"\0"
    for shape, es in zip(built.in_shapes, built.in_elementsize):
        dims = (1,) * (4 - len(shape)) + tuple(shape)
        head += struct.pack("<5i", *dims, es)
    head += struct.pack(f"<{len(out_caps)}i", *out_caps)
    body = b"".join(np.ascontiguousarray(a).tobytes() for feed in runs for a in feed)
    t0 = time.time()
    res = subprocess.run(["qemu-hexagon", str(built.exe)], input=head + body, capture_output=True,
                         timeout=timeout, check=False)
    wall = time.time() - t0
    err = res.stderr.decode(errors="replace")
    if res.returncode != 0:
        raise hvx_build.BuildError(f"{built.prefix} exited {res.returncode}: {err[-3000:]}")
    out, pos, results = res.stdout, 0, []
    for _ in runs:
        rc, = struct.unpack_from("<i", out, pos)
        pos += 4
        outs = []
        for _ in out_caps:
            b, h, w, d, n = struct.unpack_from("<5i", out, pos)
            pos += 20
            outs.append(((b, h, w, d), out[pos:pos + n]))
            pos += n
        results.append({"rc": rc, "outputs": outs})
    return results, wall, err
