"""The changes ``tools/golden_prepare.py`` makes to its work copy of the prepare oracle (never to the oracle).

The stock oracle (``oracles/prepare``) runs ``.tflite`` files only, stops at the first model that fails,
leaves nnlib's ``shape_util.c`` out and aborts in every HVX intrinsic, so the transpose-conv models
(mediapipe_selfie_segmentation*: prepare.c create_transpose_conv_nodes -> do_pad -> bulk_transpose.c) and
the int16 models cannot be prepared. In the copy:

- ``run.sh``: the model is ``<name>.tflite`` or ``<name>.onnx``; ``$ARGS_DIR/<name>.args`` (when present)
  adds options to every ``hexnn-import`` call (``--input-shape`` of the RapidOCR models); ``$GRAPH_CFLAGS``
  goes to the compile of the emitted graph (op-name aliases); a model that does not convert, compile or link
  is reported and the next one runs; ``SKIP_FULL=1`` skips the ``--full`` prepare (it aborts in the first
  HVX op check); ``NO_BUILD=1`` reuses an existing build; ``ORACLE_ONLY=1`` skips the project's side (its
  JSON dumps and the oracle's own compare.py / classify.py: golden_prepare.py compares node lists itself);
- ``build.sh``: ``shape_util.c`` is compiled too, through ``x86/shape_util_wrap.c`` (its ``memset_32`` /
  ``memset_16`` take ``unsigned`` where ``nn_asm_ops.h`` declares ``size_t``: the same type on ILP32 Hexagon,
  not on x86-64), and ``x86/glue.c`` no longer defines ``vmemcpy_2d_general_with_prefetch`` (shape_util.c's);
- ``tools/gen_shim.py``: three data-movement intrinsics get C models (``Q6_V_lo_W``, ``Q6_V_hi_W`` and
  ``Q6_W_vshuff_VVR``; vshuff's swap order checked against ``qemu-hexagon`` on 14 shuffle controls), and the
  stale pre-generated ``shim/hvx_hexagon_protos.h`` (which build.sh would copy over the generated one) goes;
- ``x86/driver.c``: the dump carries the bytes (``"hex"``) of every Const prepare.c made (ids from
  0x80000000) of at most 64 KiB.
"""
from __future__ import annotations

import pathlib

SHAPE_UTIL_WRAP = """/* nnlib's shape_util.c as is; its memset_32 / memset_16 take `unsigned` where nn_asm_ops.h
 * declares `size_t` (the same type on ILP32 Hexagon, not on x86-64): compiled under other names, forwarded. */
#define memset_32 shape_util_memset_32
#define memset_16 shape_util_memset_16
#include "shape_util.c"
#undef memset_32
#undef memset_16
void *memset_32(void *dst, int val, size_t n) { return shape_util_memset_32(dst, val, (unsigned)n); }
void *memset_16(void *dst, int val, size_t n) { return shape_util_memset_16(dst, val, (unsigned)n); }
"""

#: Hexagon V66 HVX: Vdd = vshuff(Vu, Vv, Rt) starts from Vdd.v[0] = Vv, Vdd.v[1] = Vu and, for each
#: offset 1, 2, 4, ..., 64 set in Rt, swaps v[1].ub[k] with v[0].ub[k + offset] for every k without that bit
INTRINSICS = r"""
static inline HVX_Vector Q6_V_lo_W(HVX_VectorPair w)
{ HVX_Vector v; __builtin_memcpy(&v, &w, 128); return v; }
static inline HVX_Vector Q6_V_hi_W(HVX_VectorPair w)
{ HVX_Vector v; __builtin_memcpy(&v, (char *)&w + 128, 128); return v; }
static inline HVX_VectorPair Q6_W_vshuff_VVR(HVX_Vector vu, HVX_Vector vv, int rt)
{
	HVX_VectorPair w; unsigned char *p = (unsigned char *)&w;
	__builtin_memcpy(p, &vv, 128); __builtin_memcpy(p + 128, &vu, 128);
	for (int off = 1; off < 128; off <<= 1)
		if (rt & off)
			for (int k = 0; k < 128; k++)
				if (!(k & off)) { unsigned char t = p[128 + k]; p[128 + k] = p[k + off]; p[k + off] = t; }
	return w;
}
"""

DRIVER_HEX = """			if (n->node_id >= 0x80000000u && t->data_size <= 65536) {
				fprintf(f, ", \\"hex\\": \\"");
				for (unsigned b = 0; b < t->data_size; b++) fprintf(f, "%02x", ((unsigned char const *)t->data)[b]);
				fprintf(f, "\\"");
			}
"""

RUN_LOOP = """for m in $MODELS; do
  MF="$MODELS_DIR/$m.tflite"; [ -f "$MF" ] || MF="$MODELS_DIR/$m.onnx"
  XA=""; [ -n "${ARGS_DIR:-}" ] && [ -f "$ARGS_DIR/$m.args" ] && XA="$(cat "$ARGS_DIR/$m.args")"
"""

#: (file, old text, new text): each old text must be found exactly once
EDITS: tuple[tuple[str, str, str], ...] = (
    ("run.sh", '"$HERE/build.sh"\n', '[ -n "${NO_BUILD:-}" ] && [ -f "$BUILD/cflags" ] || "$HERE/build.sh"\n'),
    ("run.sh", "for m in $MODELS; do\n", RUN_LOOP),
    ("run.sh", '"$HEXNN" "$MODELS_DIR/$m.tflite" --emit c --no-optimize -o "$D/graph.c" > /dev/null',
     '"$HEXNN" "$MF" $XA --emit c --no-optimize -o "$D/graph.c" > "$OUT/$m.convert.log" 2>&1 || '
     '{ echo "  hexnn-import refused: $(tail -1 "$OUT/$m.convert.log")" | tee -a "$OUT/summary.txt"; continue; }'),
    ("run.sh", '"$HEXNN" "$MODELS_DIR/$m.tflite" --emit json --no-optimize -o "$OUT/$m.unprepared.json" > /dev/null',
     '[ -n "${ORACLE_ONLY:-}" ] || "$HEXNN" "$MF" $XA --emit json --no-optimize -o "$OUT/$m.unprepared.json" '
     '> /dev/null || continue'),
    ("run.sh", '"$HEXNN" "$MODELS_DIR/$m.tflite" --emit json -o "$OUT/$m.project_prepared.json" > /dev/null',
     '[ -n "${ORACLE_ONLY:-}" ] || "$HEXNN" "$MF" $XA --emit json -o "$OUT/$m.project_prepared.json" > /dev/null '
     '|| continue'),
    ("run.sh", '-I"$BUILD/x86/interface" \\\n        -c "$D/graph.c" -o "$D/graph.o"\n',
     '-I"$BUILD/x86/interface" ${GRAPH_CFLAGS:-} \\\n        -c "$D/graph.c" -o "$D/graph.o" || '
     '{ echo "  graph.c does not compile" | tee -a "$OUT/summary.txt"; continue; }\n'),
    ("run.sh", '"$D/stubs.o" -lm -lpthread\n',
     '"$D/stubs.o" -lm -lpthread || { echo "  link failed" | tee -a "$OUT/summary.txt"; continue; }\n'),
    ("run.sh", '  rc=0; timeout 120 "$D/prepare_x86" --full',
     '  [ -n "${SKIP_FULL:-}" ] || { rc=0; timeout 120 "$D/prepare_x86" --full'),
    ("run.sh", '|| true)" | tee -a "$OUT/summary.txt"\n', '|| true)" | tee -a "$OUT/summary.txt"; }\n'),
    ("run.sh", '  "$PY" "$HERE/tools/compare.py"', '  [ -n "${ORACLE_ONLY:-}" ] || "$PY" "$HERE/tools/compare.py"'),
    ("run.sh", '--json="$OUT/$m.compare.json" | tee -a "$OUT/summary.txt"\n',
     '--json="$OUT/$m.compare.json" | tee -a "$OUT/summary.txt" || true\n'),
    ("run.sh", '  echo "  classification', '  [ -n "${ORACLE_ONLY:-}" ] || echo "  classification'),
    ("run.sh", '  "$PY" "$HERE/tools/classify.py"', '  [ -n "${ORACLE_ONLY:-}" ] || "$PY" "$HERE/tools/classify.py"'),
    ("run.sh", '"$OUT/$m.project_prepared.json" | tee -a "$OUT/summary.txt"\ndone',
     '"$OUT/$m.project_prepared.json" | tee -a "$OUT/summary.txt" || true\ndone'),
    ("build.sh", 'compile "$HERE/x86/glue.c" "$BUILD/obj/glue.o"\n',
     'compile "$HERE/x86/glue.c" "$BUILD/obj/glue.o"\n'
     'compile "$HERE/x86/shape_util_wrap.c" "$BUILD/obj/shape_util_wrap.o" -I"$NNLIB/hexagon/src"\n'),
    ("x86/glue.c", "void vmemcpy_2d_general_with_prefetch(int wid, int ht, void *dst, int dst_pitch, void const *src, "
     "unsigned src_pitch)\n{ vmemcpy_2d_asm(wid, ht, dst, dst_pitch, src, src_pitch); }\n",
     "/* vmemcpy_2d_general_with_prefetch: shape_util.c's own */\n"),
    ("tools/gen_shim.py", "'''\nreal = set(", INTRINSICS + "'''\nreal = set("),
    ("x86/driver.c", "\t\t\tif (t->data_size == 4) {", DRIVER_HEX + "\t\t\tif (t->data_size == 4) {"),
)


class PatchError(RuntimeError):
    """The oracle copy does not hold a text the patch expects (a different oracle version)."""


def patch_oracle_copy(work: pathlib.Path) -> None:
    """Apply :data:`EDITS` to the oracle copy in ``work`` once (a marker file records it)."""
    marker = work / ".golden_prepare_patched"
    if marker.exists():
        return
    for name, old, new in EDITS:
        path = work / name
        text = path.read_text()
        if text.count(old) != 1:
            raise PatchError(f"{path}: expected one {old[:60]!r}, found {text.count(old)}")
        path.write_text(text.replace(old, new))
    (work / "x86" / "shape_util_wrap.c").write_text(SHAPE_UTIL_WRAP)
    (work / "shim" / "hvx_hexagon_protos.h").unlink(missing_ok=True)
    marker.write_text("patched by tools/golden_prepare_patch.py\n")
