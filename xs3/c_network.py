"""One C header for a whole lowered XS3 network: constants, a tensor table and a layer table.

The per-layer arrays reuse :mod:`hexnn_import.xs3.c_header`'s helpers (``c_ident``, ``c_array_body``,
``bso_blocks``); the arena offsets come from :mod:`hexnn_import.xs3.arena` (TFLM's
``greedy_memory_planner.cc`` algorithm). The input is a plain :class:`NetworkDesc`.

Header layout (``p`` = ``c_ident(net.name)``, ``P`` = its upper case)::

    /* comment */
    #ifndef P_NETWORK_H_ / #define P_NETWORK_H_
    #include <stdint.h>, <stddef.h>
    #define P_ARENA_SIZE, P_LARGEST_LIVE, P_WEIGHT_BYTES, P_N_LAYERS, P_N_TENSORS,
            P_N_INPUTS, P_N_OUTPUTS, P_N_KERNELS, P_N_PARAMS (16)
    #define P_DTYPE_INT8 0, P_DTYPE_INT16 1, P_DTYPE_INT32 2      tensor dtype codes
    #define P_T_<tensor> i                                     index of each tensor in p_tensors
    #define P_L_<layer> i                                      index of each layer in p_layers
    #define P_L_<layer>_P_<param> k                            first slot of each parameter in params[]
    typedef enum { P_KERNEL_<KERNEL> = 0, ... } p_kernel_t;    kernels that appear, first-use order
    typedef struct { const char *name; int32_t shape[4]; int32_t dtype; int32_t offset; } p_tensor_t;
    typedef struct { const char *name; int kernel; int n_in; int in[4]; int n_out; int out[4];
                     const void *weights; const void *bso; const void *extra; int32_t params[16]; } p_layer_t;
    extern declarations of every object below
    #ifdef P_IMPLEMENTATION
      const <type> p_<layer>_<array>[dims] __attribute__((aligned(4))) = {...};   every layer's arrays
      const char *const p_kernel_names[P_N_KERNELS];     kernel name strings, enum order
      const p_tensor_t p_tensors[P_N_TENSORS];           network tensor order
      const int32_t p_inputs[P_N_INPUTS], p_outputs[P_N_OUTPUTS];   tensor indices
      const p_layer_t p_layers[P_N_LAYERS];              layer order
    #endif
    #endif

Linkage: every object has external linkage and the ``p_`` prefix, so no unused-static warning can
arise; the header may be included in any number of translation units and exactly one of them defines
``P_IMPLEMENTATION`` before including it to get the definitions.

Arrays: ``"bso"`` (int16, ``(groups, 7, 16)``) is written as ``uint16_t [groups][7][16]`` with
``bso_blocks`` (the memory of lib_nn's ``nn_bso_block_t[groups]``: seven rows of sixteen ``data16_t``
per block, two's-complement bit patterns), so a ``const nn_bso_block_t *`` may point at it; every other
array keeps its shape as ``int8_t`` / ``uint8_t`` / ``int16_t`` / ``uint16_t`` / ``int32_t`` /
``uint32_t`` by dtype (bool as ``uint8_t``; int64 / uint64 only if every value fits int32, written as
``int32_t``). All are ``__attribute__((aligned(4)))``.

Tensor table: ``shape`` is the tensor's shape padded with leading 1s to 4 dims (NHWC for a 4-d tensor),
``dtype`` one of the codes above, ``offset`` the arena offset or -1 (not in the arena).

Layer table: ``in`` / ``out`` are tensor indices, unused slots -1. ``weights`` points at
``arrays["weights"]``, ``bso`` at ``arrays["bso"]``, ``extra`` at the first other array in the dict's
insertion order (e.g. ``"lut"``); absent ones are NULL (further arrays are still emitted by name).
``params`` convention: the values of ``NetLayer.params`` in the dict's insertion order, a scalar taking
one slot and a list its length in consecutive slots, the rest 0; a comment line above each layer's
entry names every slot (``[k] name=value`` or ``[k..m] name=v1,v2``) and ``P_L_<layer>_P_<param>``
gives each parameter's first slot.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from hexnn_import.emit.c_text import c_string
from hexnn_import.xs3.c_header import bso_blocks, c_array_body, c_ident

#: tensor dtype codes of the tensor table
DTYPE_CODES = {"int8": 0, "int16": 1, "int32": 2}
DTYPE_BYTES = {"int8": 1, "int16": 2, "int32": 4}
#: numpy array dtype -> C element type
C_TYPES = {"int8": "int8_t", "uint8": "uint8_t", "bool": "uint8_t", "int16": "int16_t", "uint16": "uint16_t",
           "int32": "int32_t", "uint32": "uint32_t"}
N_PARAMS = 16
MAX_IO = 4
INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1


@dataclass
class NetTensor:
    """A network tensor: name, shape, dtype ("int8" | "int16" | "int32") and arena offset (None: not in it)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    offset: int | None = None


@dataclass
class NetLayer:
    """One lowered layer: its lib_nn kernel, tensor names, small integer parameters and constant arrays."""

    name: str
    kernel: str
    inputs: list[str]
    outputs: list[str]
    params: dict[str, int | list[int]]
    arrays: dict[str, np.ndarray]


@dataclass
class NetworkDesc:
    """A whole lowered network as the header sees it."""

    name: str
    tensors: list[NetTensor]
    layers: list[NetLayer]
    inputs: list[str]
    outputs: list[str]
    arena_size: int
    largest_live: int
    weight_bytes: int
    #: network inputs a Hexagon node writes / network outputs a Hexagon node reads (not the model's own):
    #: the header then holds only the XS3 part of the model
    hexagon_inputs: list[str] = field(default_factory=list)
    hexagon_outputs: list[str] = field(default_factory=list)


class _Names:
    """Unique C identifiers: a repeated identifier gets ``_2``, ``_3``... appended."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def get(self, ident: str) -> str:
        out, k = ident, 2
        while out.upper() in self.used:
            out, k = f"{ident}_{k}", k + 1
        self.used.add(out.upper())
        return out


_NOT_COMMENT = re.compile(r"[^ -~]|[*?\\]")
_NOT_PLAIN_STRING = re.compile(r'[^ -~]|["?\\]')


def _c_str(text: str) -> str:
    """:func:`c_string` of a name; a name of printable ASCII without '"', '?' and backslash is its own literal
    (what c_string writes for it), anything else goes through c_string."""
    return f'"{text}"' if isinstance(text, str) and not _NOT_PLAIN_STRING.search(text) else c_string(text)


def c_comment_text(text: str) -> str:
    """Text safe inside a one-line C comment: printable ASCII without '*', '?' and backslash."""
    return _NOT_COMMENT.sub("_", text)


def c_int32(value: int) -> str:
    """An int32 constant; INT32_MIN as an expression (its literal would be an out-of-range int)."""
    return "(-2147483647 - 1)" if value == INT32_MIN else str(value)


def _int32_list(values: list[int]) -> str:
    """``values`` as :func:`c_int32` writes each, comma-separated."""
    return ", ".join(map(str, values)) if INT32_MIN not in values else ", ".join(map(c_int32, values))


def _c_array(arr: np.ndarray, where: str) -> tuple[str, np.ndarray]:
    """(C element type, array to print) of a constant integer array."""
    arr = np.asarray(arr)
    if arr.size == 0:
        raise ValueError(f"{where}: empty array (C99 has no zero-size arrays)")
    if arr.ndim == 0:
        arr = arr.reshape(1)
    kind = arr.dtype.name
    if kind in ("int64", "uint64"):
        if arr.min() < INT32_MIN or arr.max() > INT32_MAX:
            raise ValueError(f"{where}: {kind} values outside int32")
        return "int32_t", arr.astype(np.int32)
    if kind not in C_TYPES:
        raise ValueError(f"{where}: unsupported array dtype {kind} (integer arrays only)")
    return C_TYPES[kind], arr.astype(np.uint8) if kind == "bool" else arr


def _flat_params(layer: NetLayer) -> tuple[list[int], list[tuple[str, int, list[int]]]]:
    """(16 slots, [(name, first slot, values)]) of a layer's params in dict order."""
    slots: list[int] = []
    named: list[tuple[str, int, list[int]]] = []
    for key, value in layer.params.items():
        if type(value) is int and INT32_MIN <= value <= INT32_MAX:  # the common case, checked as below
            named.append((key, len(slots), [value]))
            slots.append(value)
            continue
        values = ([value] if isinstance(value, (int, np.integer)) or np.ndim(value) == 0
                  else list(np.asarray(value).reshape(-1)))
        ints = []
        for v in values:
            if not isinstance(v, (int, np.integer)):
                raise ValueError(f"layer {layer.name!r}: parameter {key!r} is not an integer: {v!r}")
            if not INT32_MIN <= int(v) <= INT32_MAX:
                raise ValueError(f"layer {layer.name!r}: parameter {key!r} value {int(v)} outside int32")
            ints.append(int(v))
        named.append((key, len(slots), ints))
        slots += ints
    if len(slots) > N_PARAMS:
        raise ValueError(f"layer {layer.name!r}: {len(slots)} parameter values exceed the {N_PARAMS} slots")
    return slots + [0] * (N_PARAMS - len(slots)), named


def _params_comment(named: list[tuple[str, int, list[int]]]) -> str:
    parts = []
    for key, start, vals in named:
        if not vals:
            parts.append(f"{key}=(none)")
        elif len(vals) == 1:
            parts.append(f"[{start}] {key}={vals[0]}")
        else:
            parts.append(f"[{start}..{start + len(vals) - 1}] {key}={','.join(map(str, vals))}")
    return c_comment_text("params: " + ("; ".join(parts) if parts else "(none)"))


def _io(layer: NetLayer, names: Sequence[str], index: dict[str, int], what: str) -> str:
    if len(names) > MAX_IO:
        raise ValueError(f"layer {layer.name!r}: {len(names)} {what} exceed {MAX_IO}")
    for n in names:
        if n not in index:
            raise ValueError(f"layer {layer.name!r}: unknown {what[:-1]} tensor {n!r}")
    idx = [index[n] for n in names] + [-1] * (MAX_IO - len(names))
    return "{" + ", ".join(map(str, idx)) + "}"


def _tensor_entry(t: NetTensor, arena_size: int) -> tuple[str, str]:
    """(initializer, comment) of one tensor-table entry; validates dtype, shape and offset."""
    if t.dtype not in DTYPE_CODES:
        raise ValueError(f"tensor {t.name!r}: dtype {t.dtype!r} is not one of {sorted(DTYPE_CODES)}")
    shape = tuple(int(d) for d in t.shape)
    if len(shape) > 4 or any(d < 0 for d in shape):
        raise ValueError(f"tensor {t.name!r}: shape {shape} is not up to 4 non-negative dims")
    padded = (1,) * (4 - len(shape)) + shape
    nbytes = math.prod(shape) * DTYPE_BYTES[t.dtype]
    if t.offset is not None and (t.offset < 0 or t.offset + nbytes > arena_size):
        raise ValueError(f"tensor {t.name!r}: [{t.offset}, {t.offset + nbytes}) is outside the arena of "
                         f"{arena_size} bytes")
    off = -1 if t.offset is None else int(t.offset)
    init = (f"  {{{_c_str(t.name)}, {{{', '.join(map(str, padded))}}}, {DTYPE_CODES[t.dtype]}, {off}}}")
    return init, c_comment_text(f"{t.name}: {t.dtype} {list(shape)}, {nbytes} bytes")


def network_header(net: NetworkDesc) -> str:
    """The whole-network C header of ``net`` (layout in the module docstring); ValueError on a bad desc."""
    if not net.layers:
        raise ValueError("a network header needs at least one layer")
    if not net.inputs or not net.outputs:
        raise ValueError("a network header needs at least one input and one output")
    names = _Names()
    p = names.get(c_ident(net.name))
    P = p.upper()
    fixed = ["NETWORK_H_", "IMPLEMENTATION", "ARENA_SIZE", "LARGEST_LIVE", "WEIGHT_BYTES", "N_LAYERS", "N_TENSORS",
             "N_INPUTS", "N_OUTPUTS", "N_KERNELS", "N_PARAMS", "KERNEL_T", "TENSOR_T", "LAYER_T", "KERNEL_NAMES",
             "TENSORS", "INPUTS", "OUTPUTS", "LAYERS", *(f"DTYPE_{k.upper()}" for k in DTYPE_CODES)]
    names.used.update(f"{P}_{n}" for n in fixed)      # the fixed names can never be taken by a derived one

    index: dict[str, int] = {}
    for i, t in enumerate(net.tensors):
        if t.name in index:
            raise ValueError(f"duplicate tensor name {t.name!r}")
        index[t.name] = i
    for n in [*net.inputs, *net.outputs]:
        if n not in index:
            raise ValueError(f"network input/output {n!r} is not a tensor")
    kernels: list[str] = []
    for layer in net.layers:
        if layer.kernel not in kernels:
            kernels.append(layer.kernel)
    kernel_enum = {k: names.get(f"{P}_KERNEL_{c_ident(k).upper()}") for k in kernels}

    defines = [f"#define {P}_ARENA_SIZE {int(net.arena_size)}", f"#define {P}_LARGEST_LIVE {int(net.largest_live)}",
               f"#define {P}_WEIGHT_BYTES {int(net.weight_bytes)}", f"#define {P}_N_LAYERS {len(net.layers)}",
               f"#define {P}_N_TENSORS {len(net.tensors)}", f"#define {P}_N_INPUTS {len(net.inputs)}",
               f"#define {P}_N_OUTPUTS {len(net.outputs)}", f"#define {P}_N_KERNELS {len(kernels)}",
               f"#define {P}_N_PARAMS {N_PARAMS}", "",
               "/* tensor dtype codes (p_tensor_t.dtype) */",
               *(f"#define {P}_DTYPE_{k.upper()} {v}" for k, v in DTYPE_CODES.items()), "",
               "/* tensor indices */"]
    tensor_rows, tensor_comments = [], []
    for i, t in enumerate(net.tensors):
        init, comment = _tensor_entry(t, net.arena_size)
        tensor_rows.append(init)
        tensor_comments.append(comment)
        defines.append(f"#define {names.get(f'{P}_T_{c_ident(t.name).upper()}')} {i} /* {comment} */")

    decls: list[str] = []
    data: list[str] = []
    layer_rows: list[str] = []
    defines += ["", "/* layer indices and each parameter's first slot in params[] */"]
    for li, layer in enumerate(net.layers):
        lid = c_ident(layer.name)
        ldef = names.get(f"{P}_L_{lid.upper()}")
        defines.append(f"#define {ldef} {li}")
        slots, named = _flat_params(layer)
        for key, start, _ in named:
            defines.append(f"#define {names.get(f'{ldef}_P_{c_ident(key).upper()}')} {start}")
        refs = {"weights": "NULL", "bso": "NULL", "extra": "NULL"}
        data.append(f"/* ---- layer {li}: {c_comment_text(f'{layer.name} ({layer.kernel})')} ---- */")
        for key, arr in layer.arrays.items():
            where = f"layer {layer.name!r} array {key!r}"
            ident = names.get(f"{p}_{lid}_{c_ident(key)}")
            if key == "bso":
                bso = np.asarray(arr)
                if bso.ndim != 3 or bso.shape[1:] != (7, 16) or bso.shape[0] == 0 or bso.dtype != np.int16:
                    raise ValueError(f"{where}: the BSO must be int16 (groups, 7, 16), got {bso.dtype} {bso.shape}")
                ctype, dims, body = "uint16_t", f"[{bso.shape[0]}][7][16]", bso_blocks(bso)
            else:
                ctype, values = _c_array(arr, where)
                dims, body = "".join(f"[{d}]" for d in values.shape), c_array_body(values)
            decls.append(f"extern const {ctype} {ident}{dims};")
            data.append(f"const {ctype} {ident}{dims} __attribute__((aligned(4))) = {body};")
            slot = key if key in ("weights", "bso") else "extra"
            if refs[slot] == "NULL":
                refs[slot] = ident
        ins = _io(layer, layer.inputs, index, "inputs")
        outs = _io(layer, layer.outputs, index, "outputs")
        layer_rows.append(
            f"  /* [{li}] {c_comment_text(layer.name)}: {c_comment_text(layer.kernel)}; {_params_comment(named)} */\n"
            f"  {{{_c_str(layer.name)}, {kernel_enum[layer.kernel]}, {len(layer.inputs)}, {ins}, "
            f"{len(layer.outputs)}, {outs}, {refs['weights']}, {refs['bso']}, {refs['extra']},\n"
            f"   {{{_int32_list(slots)}}}}}")
    data.append("")

    guard = f"{P}_NETWORK_H_"
    impl = f"{P}_IMPLEMENTATION"
    head = [f"/* XS3 (lib_nn) network {c_comment_text(net.name)}: constants, tensor table and layer table,",
            " * written by hexnn-import (hexnn_import.xs3.c_network). Arena offsets follow TFLM's greedy planner.",
            f" * Include anywhere; define {impl} in exactly one .c file before including it. */",
            f"#ifndef {guard}", f"#define {guard}", "", "#include <stddef.h>", "#include <stdint.h>", ""]
    types = ["", "/* lib_nn kernels of this network (p_layer_t.kernel) */", "typedef enum {",
             *(f"  {e} = {i}," for i, e in enumerate(kernel_enum.values())), f"}} {p}_kernel_t;", "",
             "/* name, shape padded with leading 1s to 4 dims, dtype code, arena offset (-1: not in the arena) */",
             f"typedef struct {{ const char *name; int32_t shape[4]; int32_t dtype; int32_t offset; }} {p}_tensor_t;",
             "", "/* in/out: tensor indices (-1 unused); weights/bso/extra: the layer's arrays or NULL;",
             " * params: NetLayer.params values in insertion order, lists flattened, the rest 0 */",
             "typedef struct {", "  const char *name;", "  int kernel;", "  int n_in;", "  int in[4];",
             "  int n_out;", "  int out[4];", "  const void *weights;", "  const void *bso;", "  const void *extra;",
             f"  int32_t params[{N_PARAMS}];", f"}} {p}_layer_t;", "",
             f"extern const char *const {p}_kernel_names[{P}_N_KERNELS];",
             f"extern const {p}_tensor_t {p}_tensors[{P}_N_TENSORS];",
             f"extern const int32_t {p}_inputs[{P}_N_INPUTS];",
             f"extern const int32_t {p}_outputs[{P}_N_OUTPUTS];",
             f"extern const {p}_layer_t {p}_layers[{P}_N_LAYERS];", *decls, ""]
    tables = [f"#ifdef {impl}", "", *data,
              f"const char *const {p}_kernel_names[{P}_N_KERNELS] = {{"
              + ", ".join(c_string(k) for k in kernels) + "};", "",
              f"const {p}_tensor_t {p}_tensors[{P}_N_TENSORS] = {{",
              ",\n".join(f"{row} /* {c} */" for row, c in zip(tensor_rows, tensor_comments)), "};", "",
              f"const int32_t {p}_inputs[{P}_N_INPUTS] = {{{', '.join(str(index[n]) for n in net.inputs)}}};",
              f"const int32_t {p}_outputs[{P}_N_OUTPUTS] = {{{', '.join(str(index[n]) for n in net.outputs)}}};", "",
              f"const {p}_layer_t {p}_layers[{P}_N_LAYERS] = {{", ",\n".join(layer_rows), "};", "",
              f"#endif /* {impl} */"]
    return "\n".join(head + defines + types + tables + ["", f"#endif /* {guard} */", ""])
