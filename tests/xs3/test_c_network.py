"""The whole-network C header: compiled with gcc -std=c99 -Wall -Wextra -Werror (-pedantic) into a
test program whose printed read-back (array checksums, tensor and layer tables) must equal numpy's."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hexnn_import.xs3.arena import ArenaBuffer, plan_arena
from hexnn_import.xs3.c_network import NetLayer, NetTensor, NetworkDesc, c_string, network_header

GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc is not installed: the header cannot be compiled")
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
NAME = "tiny-net v2"          # -> prefix tiny_net_v2 / TINY_NET_V2
P, PU = "tiny_net_v2", "TINY_NET_V2"
DT_BYTES = {"int8": 1, "int16": 2, "int32": 4}


def tiny_network(seed: int = 0) -> NetworkDesc:
    """conv (weights + BSO) -> add (residual, no arrays) -> lookup (lut + arrays of every dtype)."""
    rng = np.random.default_rng(seed)
    shapes = {"input:0": ((1, 6, 6, 8), "int8"), "model/conv 1/out": ((1, 6, 6, 16), "int8"),
              'res"id\\ual?': ((1, 6, 6, 16), "int8"), "über-acc": ((6, 16), "int32"), "y": ((16,), "int16"),
              "const table": ((4,), "int8")}
    tensors = [NetTensor(n, s, d) for n, (s, d) in shapes.items()]
    nbytes = {n: int(np.prod(s)) * DT_BYTES[d] for n, (s, d) in shapes.items()}
    life = {"input:0": (-1, 1), "model/conv 1/out": (0, 1), 'res"id\\ual?': (1, 2), "über-acc": (1, 2),
            "y": (2, 3)}
    plan = plan_arena([ArenaBuffer(n, nbytes[n], *life[n]) for n in life])
    for t in tensors:
        t.offset = plan.offsets.get(t.name)           # "const table" stays out of the arena
    bso = rng.integers(-2 ** 15, 2 ** 15, (1, 7, 16), dtype=np.int16)
    bso[0, 0, :4] = [-1, -32768, 32767, 0]
    layers = [
        NetLayer("model/conv 1", "conv2d_deep", ["input:0"], ["model/conv 1/out"],
                 {"k_shape": [3, 3], "stride": [1, 1], "zero_point": -128, "big": -2 ** 31},
                 {"weights": rng.integers(-128, 128, (16, 3, 3, 8), dtype=np.int8), "bso": bso}),
        NetLayer("add#2", "add_elementwise", ["model/conv 1/out", "input:0"], ['res"id\\ual?', "über-acc"],
                 {"shift": 7, "m": [3, -5]}, {}),
        NetLayer("9lookup", "lookup8", ['res"id\\ual?', "über-acc", "const table"], ["y"], {},
                 {"lut": rng.integers(-128, 128, 256, dtype=np.int8),
                  "i16": rng.integers(-2 ** 15, 2 ** 15, (5, 3), dtype=np.int16),
                  "i32": np.array([-2 ** 31, 2 ** 31 - 1, -7], dtype=np.int32),
                  "u8": rng.integers(0, 256, 9, dtype=np.uint8),
                  "i64": np.array([[1, -2], [3, 2 ** 31 - 1]], dtype=np.int64),
                  "flag": np.array([True, False, True])}),
    ]
    return NetworkDesc(NAME, tensors, layers, ["input:0"], ["y"], plan.size, plan.largest_live,
                       sum(a.nbytes for layer in layers for a in layer.arrays.values()))


def declared_arrays(header: str) -> list[tuple[str, str]]:
    """(C type, identifier) of every per-layer array, in declaration order."""
    return re.findall(rf"^extern const (u?int(?:8|16|32)_t) ({P}_\w+)\[\d", header, flags=re.M)


def checksums(arr: np.ndarray, is_bso: bool) -> tuple[int, int, int]:
    """(count, sum, position-weighted sum) of the values C reads back."""
    flat = (arr.view(np.uint16) if is_bso else arr.astype(np.int64)).reshape(-1).astype(np.int64)
    weights = np.arange(flat.size) % 13 + 1
    return flat.size, int(flat.sum()), int((flat * weights).sum())


def c_test_program(net: NetworkDesc, arrays: list[tuple[str, str]]) -> str:
    """C source printing the tables and a checksum of every array (names as hex bytes)."""
    lines = ["#include <stdio.h>", '#include "net.h"', '#include "net.h"   /* the include guard holds */',
             "static void hexname(const char *s) { while (*s) printf(\"%02x\", (unsigned)(unsigned char)*s++); }",
             "int main(void) {", "  int i, k;",
             f'  printf("D %d %d %d %d %d %d %d\\n", {PU}_ARENA_SIZE, {PU}_LARGEST_LIVE, {PU}_WEIGHT_BYTES, '
             f"{PU}_N_LAYERS, {PU}_N_TENSORS, {PU}_N_INPUTS, {PU}_N_OUTPUTS);",
             f"  for (i = 0; i < {PU}_N_TENSORS; ++i) {{",
             f"    const {P}_tensor_t *t = &{P}_tensors[i];",
             '    printf("T %d ", i); hexname(t->name);',
             '    printf(" %d %d %d %d %d %d\\n", (int)t->shape[0], (int)t->shape[1], (int)t->shape[2], '
             "(int)t->shape[3], (int)t->dtype, (int)t->offset);", "  }",
             f'  printf("I %d %d\\n", (int){P}_inputs[0], (int){P}_outputs[0]);',
             f"  for (i = 0; i < {PU}_N_LAYERS; ++i) {{",
             f"    const {P}_layer_t *l = &{P}_layers[i];",
             '    printf("L %d ", i); hexname(l->name); printf(" "); hexname(' + P + "_kernel_names[l->kernel]);",
             '    printf(" %d", l->n_in); for (k = 0; k < 4; ++k) printf(" %d", l->in[k]);',
             '    printf(" %d", l->n_out); for (k = 0; k < 4; ++k) printf(" %d", l->out[k]);',
             "    for (k = 0; k < 16; ++k) printf(\" %ld\", (long)l->params[k]);", '    printf("\\n");', "  }"]
    for ctype, ident in arrays:
        lines += [f"  {{ const {ctype} *v = (const {ctype} *){ident}; long long s = 0, w = 0;",
                  f"    size_t n = sizeof({ident}) / sizeof({ctype}), j;",
                  "    for (j = 0; j < n; ++j) { s += v[j]; w += (long long)v[j] * (long long)(j % 13 + 1); }",
                  f'    printf("A {ident} %zu %lld %lld %d\\n", n, s, w, (int)((size_t){ident} % 4 == 0)); }}']
    # the layer table's pointers
    by_ident = dict((ident, ident) for _, ident in arrays)
    it = iter(ident for _, ident in arrays)
    for li, layer in enumerate(net.layers):
        idents = {key: next(it) for key in layer.arrays}
        extra = next((k for k in layer.arrays if k not in ("weights", "bso")), None)
        exp = [idents.get("weights", "NULL"), idents.get("bso", "NULL"), idents[extra] if extra else "NULL"]
        assert all(e == "NULL" or e in by_ident for e in exp)
        checks = ", ".join(f"{P}_layers[{li}].{slot} == (const void *){e}"
                           for slot, e in zip(("weights", "bso", "extra"), exp))
        lines.append(f'  printf("R {li} %d %d %d\\n", {checks});')
    lines += [f'  printf("M %d %d %d %d %d\\n", {PU}_L_MODEL_CONV_1_P_STRIDE, {PU}_L_MODEL_CONV_1_P_ZERO_POINT, '
              f"{PU}_L_ADD_2_P_M, {PU}_T_Y, {PU}_KERNEL_LOOKUP8);", "  return 0;", "}", ""]
    return "\n".join(lines)


def build_and_run(tmp_path: Path, header: str, main_c: str) -> str:
    (tmp_path / "net.h").write_text(header, encoding="utf-8")
    (tmp_path / "data.c").write_text(f'#define {PU}_IMPLEMENTATION\n#include "net.h"\n')
    (tmp_path / "decl_only.c").write_text('#include "net.h"\n')
    (tmp_path / "main.c").write_text(main_c)
    for src in ("data.c", "decl_only.c", "main.c"):                 # each translation unit on its own
        r = subprocess.run([GCC, *CFLAGS, "-c", src, "-o", src[:-2] + ".o"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    r = subprocess.run([GCC, "data.o", "main.o", "-o", "prog"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    run = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    return run.stdout


@needs_gcc
def test_header_compiles_and_reads_back(tmp_path: Path) -> None:
    net = tiny_network()
    header = network_header(net)
    arrays = declared_arrays(header)
    expected_arrays = [(layer, key, arr) for layer in net.layers for key, arr in layer.arrays.items()]
    assert len(arrays) == len(expected_arrays) == 8
    out = build_and_run(tmp_path, header, c_test_program(net, arrays)).splitlines()
    rows: dict[str, list[list[str]]] = {}
    for line in out:
        rows.setdefault(line.split()[0], []).append(line.split()[1:])

    n_in = len(net.inputs)
    assert rows["D"] == [[str(v) for v in (net.arena_size, net.largest_live, net.weight_bytes, len(net.layers),
                                            len(net.tensors), n_in, len(net.outputs))]]
    index = {t.name: i for i, t in enumerate(net.tensors)}
    codes = {"int8": 0, "int16": 1, "int32": 2}
    for (i, name, *vals), t in zip(rows["T"], net.tensors, strict=True):
        assert bytes.fromhex(name).decode("utf-8") == t.name
        shape = (1,) * (4 - len(t.shape)) + tuple(t.shape)
        assert [int(v) for v in vals] == [*shape, codes[t.dtype], -1 if t.offset is None else t.offset]
    assert rows["I"] == [[str(index["input:0"]), str(index["y"])]]
    for (i, name, kernel, *vals), layer in zip(rows["L"], net.layers, strict=True):
        assert bytes.fromhex(name).decode() == layer.name and bytes.fromhex(kernel).decode() == layer.kernel
        ins = [index[n] for n in layer.inputs] + [-1] * (4 - len(layer.inputs))
        outs = [index[n] for n in layer.outputs] + [-1] * (4 - len(layer.outputs))
        flat = [v for p in layer.params.values() for v in np.atleast_1d(p).tolist()]
        assert [int(v) for v in vals] == [len(layer.inputs), *ins, len(layer.outputs), *outs,
                                          *flat, *[0] * (16 - len(flat))]
    for (ident, n, s, w, aligned), (ctype, c_ident), (layer, key, arr) in zip(rows["A"], arrays, expected_arrays,
                                                                              strict=True):
        assert ident == c_ident and key.lower() in ident.lower()
        assert (int(n), int(s), int(w)) == checksums(arr, key == "bso"), (layer.name, key)
        assert aligned == "1"
    assert [r[1:] for r in rows["R"]] == [["1", "1", "1"]] * 3
    # param slots: stride after the 2 k_shape values, zero_point after stride; m after shift; y is tensor 4
    assert rows["M"] == [["2", "4", "1", "4", "2"]]


def test_header_layout() -> None:
    net = tiny_network()
    header = network_header(net)
    types = dict((ident.split(f"{P}_")[1], ctype) for ctype, ident in declared_arrays(header))
    assert types == {"model_conv_1_weights": "int8_t", "model_conv_1_bso": "uint16_t", "l_9lookup_lut": "int8_t",
                     "l_9lookup_i16": "int16_t", "l_9lookup_i32": "int32_t", "l_9lookup_u8": "uint8_t",
                     "l_9lookup_i64": "int32_t", "l_9lookup_flag": "uint8_t"}
    assert header.count("__attribute__((aligned(4)))") == 8
    assert f"#ifndef {PU}_NETWORK_H_" in header and "#include <stdint.h>" in header
    assert f"const uint16_t {P}_model_conv_1_bso[1][7][16]" in header and "/* shift2 */" in header
    # the per-layer comment names every params slot
    assert "params: [0..1] k_shape=3,3; [2..3] stride=1,1; [4] zero_point=-128; [5] big=-2147483648" in header
    assert "(-2147483647 - 1)" in header        # INT32_MIN in the params table
    assert "enum" in header and f"{PU}_KERNEL_CONV2D_DEEP = 0" in header and f"{PU}_KERNEL_LOOKUP8 = 2" in header
    assert c_string('res"id\\ual?') in header and c_string("über-acc") == '"\\303\\274ber-acc"'


@needs_gcc
def test_two_networks_in_one_program(tmp_path: Path) -> None:
    a, b = tiny_network(1), tiny_network(2)
    b.name = "other"
    (tmp_path / "a.h").write_text(network_header(a), encoding="utf-8")
    (tmp_path / "b.h").write_text(network_header(b), encoding="utf-8")
    (tmp_path / "both.c").write_text(f'#define {PU}_IMPLEMENTATION\n#define OTHER_IMPLEMENTATION\n'
                                     '#include "a.h"\n#include "b.h"\n#include <stdio.h>\n'
                                     f'int main(void) {{ printf("%d %d\\n", (int){P}_tensors[1].offset, '
                                     '(int)other_tensors[1].offset); return 0; }\n')
    r = subprocess.run([GCC, *CFLAGS, "both.c", "-o", "both"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(tmp_path / "both")], capture_output=True, text=True, timeout=30).stdout.split()
    assert out == [str(a.tensors[1].offset), str(b.tensors[1].offset)]


def _bad(mutate) -> NetworkDesc:
    net = tiny_network()
    mutate(net)
    return net


@pytest.mark.parametrize("mutate, match", [
    (lambda n: n.layers[0].inputs.append("nope"), "unknown input tensor 'nope'"),
    (lambda n: n.layers[1].outputs.extend(["y"] * 3), "exceed 4"),
    (lambda n: n.layers[1].params.update(v=list(range(14))), "exceed the 16 slots"),
    (lambda n: n.layers[1].params.update(v=1.5), "not an integer"),
    (lambda n: n.layers[1].params.update(v=2 ** 31), "outside int32"),
    (lambda n: n.layers[0].arrays.update(bso=np.zeros((1, 6, 16), np.int16)), "BSO must be int16"),
    (lambda n: n.layers[0].arrays.update(f=np.zeros(3, np.float32)), "unsupported array dtype float32"),
    (lambda n: n.layers[0].arrays.update(e=np.zeros(0, np.int8)), "empty array"),
    (lambda n: n.layers[0].arrays.update(big=np.array([2 ** 40])), "outside int32"),
    (lambda n: setattr(n.tensors[0], "dtype", "float32"), "dtype 'float32'"),
    (lambda n: setattr(n.tensors[0], "offset", n.arena_size), "outside the arena"),
    (lambda n: setattr(n.tensors[0], "shape", (1, 1, 1, 1, 1)), "up to 4"),
    (lambda n: n.tensors.append(NetTensor("y", (1,), "int8")), "duplicate tensor name 'y'"),
    (lambda n: n.outputs.append("missing"), "is not a tensor"),
    (lambda n: n.layers.clear(), "at least one layer"),
    (lambda n: n.inputs.clear(), "at least one input"),
])
def test_bad_descriptions(mutate, match: str) -> None:
    with pytest.raises(ValueError, match=re.escape(match)):
        network_header(_bad(mutate))
