"""What the C runner's golden files record and replay: the runner's export, seeded inputs, ``run --xs3``'s tensors.

``tools/xs3_runner_golden.py`` builds ``xs3_runner.c`` against lib_nn and
records its outputs and dumped tensors; ``tests/xs3/test_c_runner_golden.py``
recomputes them with :class:`~.run.XS3Runner` (the engine behind ``run
--xs3``). Both take the model's files from :func:`runner_export` (the same
bytes ``xs3-export`` writes: :func:`.export.build_export` names the header
the same way and writes the same :func:`.c_runner.runner_files`), inputs from
:func:`seeded_inputs`, and the value of every network tensor from
:func:`network_values`.
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from hexnn_import.xs3.c_header import c_ident
from hexnn_import.xs3.c_network import NetworkDesc, network_header
from hexnn_import.xs3.c_runner import runner_files
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.export import bounded_stem
from hexnn_import.xs3.network_desc import describe_network

from hexnn_import.graph import Graph, Ref
from hexnn_import.runner import Runner, to_graph_input


def runner_export(graph: Graph, model: str | Path,
                  symmetric: bool = False) -> tuple[NetworkDesc, dict[str, Ref], dict[str, bytes]]:
    """The network of a lowered ``graph`` (:func:`.run.lowered_graph`) and the files xs3-export writes for its
    runner: the network header, ``xs3_runner.c``, ``build_runner.sh`` (name -> bytes); ``model`` is the model
    file's name (its stem names the header)."""
    stem = Path(model).stem
    net, _, refs = describe_network(graph, c_ident(stem))
    if not net.layers:
        raise XS3Error(f"{Path(model).name}: no layer lowers to an XS3 kernel; there is no network to run")
    header = f"{bounded_stem(stem)}_xs3_network.h"
    files = {header: network_header(net).encode("utf-8"), **runner_files(net, header, symmetric)}
    return net, refs, files


def seeded_inputs(graph: Graph, seed: int) -> dict[str, np.ndarray]:
    """One input per graph input, uniform over its source dtype's codes (floats: uniform in [-1, 1))."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for io in graph.inputs:
        shape = tuple(int(v) for v in io.shape)
        if io.dtype in ("int8", "uint8"):
            info = np.iinfo(io.dtype)
            feeds[io.name] = rng.integers(info.min, info.max + 1, shape).astype(io.dtype)
        elif io.dtype == "float32":
            feeds[io.name] = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
        else:
            raise XS3Error(f"input {io.name}: no seeded inputs of dtype {io.dtype}")
    return feeds


def _int8(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q)
    if q.dtype != np.uint8:
        raise XS3Error(f"a network tensor is {q.dtype} in the graph, not quint8")
    return (q ^ np.uint8(0x80)).view(np.int8)


def network_values(runner: Runner, refs: Mapping[str, Ref],
                   feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The int8 value (flat, C order) of every network tensor when ``runner`` runs ``feeds``."""
    _, every = runner.run_all(feeds)
    graph = runner.graph
    given: dict[Ref, np.ndarray] = {}
    for node in graph.nodes:
        if node.op == "INPUT":
            for io in graph.inputs:
                given[Ref(node.node_id, io.index)] = to_graph_input(io, np.asarray(feeds[io.name]))
    out = {}
    for name, ref in refs.items():
        value = every.get(ref, given.get(ref))
        if value is None:
            raise XS3Error(f"network tensor {name}: the graph computed no value for it")
        out[name] = _int8(value).reshape(-1)
    return out


def digest(data: bytes | np.ndarray) -> str:
    """The first 32 hex digits of the SHA-256 of some bytes (an array: its bytes in C order)."""
    raw = data if isinstance(data, bytes) else np.ascontiguousarray(data).tobytes()
    return hashlib.sha256(raw).hexdigest()[:32]
