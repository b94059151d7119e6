"""Compiled forms of the engine's hottest arithmetic: numba loops and onnxruntime products (issue 22).

The numpy path stays the reference (:mod:`conv_core`, :mod:`depthwise_core`, the float64 output stage of
:mod:`output_stage.codes`, the table look-ups of the add). Where a compiled library is installed, the same
integers come from:

- **numba** (``pip install "hexnn-import[fast]"``; :mod:`compiled_kernels`), one pass where numpy makes
  several over whole tensors: the supernode output stage (:func:`stage_u8`: where
  :class:`~output_stage.requant.FloatStage` proves the float64 stage exact, the same float64 multiply and add
  per element - numba compiles without fast-math, so no fused multiply-add - and the truncating cast);
  the depthwise supernode (:func:`build_depthwise`: int32 sums per pixel, exact below the node's bound,
  then the stage) and its sums alone (:func:`depthwise_sums`); per-channel extremes
  (:func:`channel_extremes`); the add's table look-up (:func:`pair_lookup`); the XS3 BSO stage
  (:func:`bso_stage`, int64);
- **onnxruntime** (the reference runtime of the ``reference`` and ``test`` extras): the convolution
  products (:func:`conv_sums`, ``MatMulInteger`` U8U8 for 1x1, float32 ``Conv`` otherwise). Its
  element-wise operators are separate passes like numpy's, so the output stage stays numba's (an
  onnxruntime graph for the stage of a 112x112x96 layer took 14 ms against numpy's 12 ms and numba's
  1 ms, on the loaded 2-core machine).

Exactness is kept by bounds (each form only where its integers are exact) and checked: a node's
compiled replay must reproduce the numpy path's codes on its first replayed input, and onnxruntime's
sums numpy's on their first use, or the node keeps numpy. ``tests/ops/test_compiled.py`` runs both
paths side by side on real models, every tensor compared. ``HEXNN_COMPILED=0`` turns the compiled
paths off. They start after an engine's first finished run in the process (:func:`warm`): a one-off
run does not pay for importing numba. Threads: ``$HEXNN_BLAS_THREADS`` (default 1), the same setting as
BLAS. The first use of a loop compiles it and numba caches the machine code on disk
(``NUMBA_CACHE_DIR``, by default the user's cache: :func:`cache_dir`). docs/speed.md has the figures.
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from hexnn_import.ops import table_store
from hexnn_import.ops.compiled_int8 import u8s8_session

if TYPE_CHECKING:  # types only
    from hexnn_import.ops.conv_core import ConvGeometry, ConvPlan
    from hexnn_import.ops.depthwise_core import DepthwisePlan
    from hexnn_import.ops.output_stage.requant import FloatStage

#: Environment variable: "0" turns the compiled path off.
COMPILED_ENV = "HEXNN_COMPILED"
#: Threads of the engine's compiled loops and BLAS (read by hexnn_import.engine too).
THREADS_ENV = "HEXNN_BLAS_THREADS"
#: int32 holds every partial sum below this.
_I32_EXACT = 2.0 ** 31
_KERNELS: Any = None
_NUMBA: Any = None


_WARM = [False]
#: open :func:`held` blocks: while one is, runs stay on the numpy path and do not warm
_HELD = [0]


def warm() -> None:
    """Allow the compiled loops from now on (the engine calls this after its first run: importing numba
    and loading its cached machine code take a second or two, which a one-off run would not win back)."""
    if not _HELD[0]:
        _WARM[0] = True


@contextmanager
def held() -> Iterator[None]:
    """Runs inside stay on the numpy path and leave the process as cold as they found it: a few short runs
    (``convert``'s output probe, :mod:`hexnn_import.probe_outputs`) do not win back numba's import."""
    was = _WARM[0]
    _WARM[0] = False
    _HELD[0] += 1
    try:
        yield
    finally:
        _HELD[0] -= 1
        _WARM[0] = was


#: ``$HEXNN_COMPILED`` != "0" as read once at the start of the engine's current run (:func:`run_settings`);
#: None outside a run (read at each call)
_ENABLED: list[bool | None] = [None]


@contextmanager
def run_settings(n_threads: int) -> Iterator[None]:
    """One engine run: the thread count (:func:`use_threads`) and ``$HEXNN_COMPILED`` read once for all its
    nodes (speed, issue 37: a run of a small model asked the environment ~30 times), both as they were after."""
    use_threads(n_threads)
    _ENABLED[0] = os.environ.get(COMPILED_ENV, "1") != "0"
    try:
        yield
    finally:
        _ENABLED[0] = None


def _enabled() -> bool:
    on = _ENABLED[0]
    return os.environ.get(COMPILED_ENV, "1") != "0" if on is None else on


def kernels() -> Any:
    """The :mod:`compiled_kernels` module, or False (numba missing or broken, ``HEXNN_COMPILED=0``, or
    no engine has finished a run yet in this process, see :func:`warm`)."""
    global _KERNELS, _NUMBA
    if not _WARM[0] or not _enabled():
        return False
    if _KERNELS is None:
        try:
            os.environ.setdefault("NUMBA_CACHE_DIR", cache_dir())
            import numba

            from hexnn_import.ops import compiled_kernels
            _KERNELS, _NUMBA = compiled_kernels, numba
        except Exception:  # noqa: BLE001 - optional: any failure to load means "numpy path"
            _KERNELS = False
    return _KERNELS


def cache_dir() -> str:
    """Where numba keeps the compiled machine code unless ``NUMBA_CACHE_DIR`` says otherwise: the user's cache
    (``$XDG_CACHE_HOME/hexnn-import/numba``, default ``~/.cache``), never the installed package's folder - numba's
    own default, whose files outlive a ``pip uninstall`` and then hide a later editable install of the package."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hexnn-import", "numba")


def available() -> bool:
    """True when the compiled loops are in use."""
    return bool(kernels())


_RUN_THREADS: list[int | None] = [None]


def use_threads(n: int | None) -> None:
    """Fix the thread count for the runs that follow (the engine calls this at the start of each run with
    ``$HEXNN_BLAS_THREADS``, read once per run); None: read the variable at each call."""
    _RUN_THREADS[0] = None if n is None else max(1, int(n))


def threads() -> int:
    """The count :func:`use_threads` fixed, else ``$HEXNN_BLAS_THREADS`` (default 1; 0 or junk: 1)."""
    if _RUN_THREADS[0] is not None:
        return _RUN_THREADS[0]
    try:
        return max(1, int(os.environ.get(THREADS_ENV, "1")))
    except ValueError:
        return 1


_THREADS_SET = [0]


def _set_threads() -> None:
    n = threads()
    if n <= 1:   # the single-threaded loops (_loop): numba's thread count is not read (speed, issue 37)
        return
    n = min(n, _NUMBA.config.NUMBA_NUM_THREADS)
    if n > 1 and n != _THREADS_SET[0]:
        _NUMBA.set_num_threads(n)
        _THREADS_SET[0] = n


def _loop(k: Any, name: str) -> Any:
    """The single-threaded loop ``name``, or its ``_parallel`` variant for more than one thread (numba's
    threading layer is started only then; GNU OpenMP's does not survive a fork)."""
    return getattr(k, name + "_parallel") if threads() > 1 else getattr(k, name)


def pair_lookup(a: np.ndarray, b: np.ndarray, codes: np.ndarray, inter: np.ndarray | None
                ) -> tuple[np.ndarray, int, int] | None:
    """``(codes[a * 256 + b], min, max of inter[a * 256 + b])`` of same-shape uint8 tensors in one pass
    (min / max are 32767 / -32768 without ``inter`` or elements), or None without numba."""
    k = kernels()
    if not k:
        return None
    out = np.empty(a.shape, np.uint8)
    ext = np.array([32767, -32768], np.int32)
    k.pair_lookup(np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1), codes,
                  inter if inter is not None else np.zeros(0, np.int16), out.reshape(-1), ext)
    return out, int(ext[0]), int(ext[1])


def requant_q31(x: np.ndarray, offseti: int, gaini: int) -> np.ndarray | None:
    """The device path of :func:`hexnn_import.ops.nnlib_requant.requantize_i32_to_qu8` (``quantize_asm``) in one
    int64 pass over int32 ``x`` (the numpy path makes seven over int64 copies), or None without numba."""
    k = kernels()
    if not k or x.dtype != np.int32:
        return None
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty(x.shape, np.uint8)
    k.requant_q31(flat, int(offseti), int(gaini), out.reshape(-1))
    return out


def scale_q28(q: np.ndarray, m: np.ndarray, clip: bool) -> np.ndarray | None:
    """:func:`hexnn_import.ops.kernels.channel_scale.scale_codes` in one int64 pass over int32 ``q`` (channel last)
    with int64 Q28 scales ``m`` (one per channel, or one), or None (no numba, other shapes)."""
    k = kernels()
    if not k or q.dtype != np.int32 or q.ndim == 0 or m.dtype != np.int64 or m.ndim != 1 \
            or m.size not in (1, q.shape[-1]) or q.size == 0:
        return None
    rows = _rows_of(q, q.shape[-1])
    out = np.empty(rows.shape, np.int32)
    k.scale_q28(rows, m, bool(clip), out)
    return out.reshape(q.shape)


def tile_max(x: np.ndarray, fh: int, fw: int) -> np.ndarray | None:
    """:func:`hexnn_import.ops.kernels.pool.tile_max` of the tiles of C-contiguous uint8 ``x`` (windows of
    ``fh x fw`` that tile it) in one pass, or None without numba."""
    k = kernels()
    if not k or x.dtype != np.uint8 or not x.flags.c_contiguous or x.size == 0:
        return None
    b, h, w, d = x.shape
    out = np.empty((b, h // fh, w // fw, d), np.uint8)
    k.tile_max(x, int(fh), int(fw), out)
    return out


def channel_pair_lookup(x: np.ndarray, second: np.ndarray, codes: np.ndarray) -> np.ndarray | None:
    """``codes[x * 256 + second]`` of uint8 ``x`` (channel last) and one uint8 ``second`` code per channel, in
    one pass, or None without numba."""
    k = kernels()
    if not k or x.size == 0:
        return None
    cols = x.shape[-1]
    rows = x.reshape(-1, cols)
    if not rows.flags.c_contiguous:
        rows = np.ascontiguousarray(rows)
    out = np.empty(rows.shape, np.uint8)
    second = np.ascontiguousarray(second, np.uint8).reshape(cols)
    if rows.shape[0] >= _TABLE_ROWS and codes.dtype == np.uint8 and codes.size == 256 * 256:
        k.channel_table_lookup(rows, _channel_tables(codes, second), out)
    else:
        k.channel_pair_lookup(rows, second, codes, out)
    return out.reshape(x.shape)


#: Rows (pixels) from which :func:`channel_pair_lookup` gathers per-channel tables first (~25% faster on the
#: face landmark's 96x96 maps; below, gathering them would cost more than it saves)
_TABLE_ROWS = 256


def _channel_tables(codes: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``codes.reshape(256, 256)[:, second].T``: each channel's 256 codes, kept in the engine's table store (one
    per table and second codes; the entry holds ``codes`` alive, so its id names it)."""
    def build() -> tuple[np.ndarray, SimpleNamespace]:
        return np.ascontiguousarray(codes.reshape(256, 256)[:, second].T), SimpleNamespace(codes=codes)
    return table_store.current().shared(("channel_tables", id(codes), second.tobytes()), second.size * 256, build,
                                        "per-channel look-up tables")[0]


def bso_stage(sums: np.ndarray, consts: tuple[np.ndarray, ...], lo: int, hi: int, clamp16: bool,
              out_dtype: type, f64: tuple[np.ndarray, ...] | None = None) -> np.ndarray | None:
    """The XS3 fused BSO stage (:class:`hexnn_import.xs3.fused_stage.FusedStage`) in one pass, or None
    without numba. ``consts`` are ``(c1, s1, scale, c2, s2)`` as int64, one per channel: in int64 (every
    intermediate is below 2**62 by the stage's own bounds) the integers are those of numpy's int32 / int64
    passes. ``f64`` (given when the stage proved every intermediate fits int32) are ``(c1, 2**-s1, scale,
    c2, 2**-s2)`` as float64: the same integers from exact float64 operations
    (:func:`compiled_kernels.bso_stage_f64`)."""
    k = kernels()
    if not k or sums.size == 0:
        return None
    cols = sums.shape[-1] if sums.ndim else 1
    rows = sums.reshape(-1, cols)
    if not rows.flags.c_contiguous:
        rows = np.ascontiguousarray(rows)
    out = np.empty(rows.shape, out_dtype)
    _set_threads()
    if f64 is not None:
        _loop(k, "bso_stage_f64")(rows, *f64, float(lo), float(hi), bool(clamp16), out)
    else:
        _loop(k, "bso_stage")(rows, *consts, int(lo), int(hi), bool(clamp16), out)
    return out.reshape(sums.shape)


#: dtypes of exact product sums the int32 loops read: int32 sums, and float32 ones (integers below 2**24, the
#: only float32 sums the products give: :class:`~hexnn_import.ops.conv_core.ConvPlan`, ``DepthwisePlan``)
_I32_READABLE = (np.dtype(np.int32), np.dtype(np.float32))


def _rows_of(sums: np.ndarray, cols: int) -> np.ndarray:
    rows = sums.reshape(-1, cols)
    return rows if rows.flags.c_contiguous else np.ascontiguousarray(rows)


def channel_extremes(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """float64 per-channel ``(min, max)`` of non-empty exact product sums (channel last) in one pass, or None.
    int32 and float32 sums take the vectorized int32 loop (:func:`compiled_kernels.channel_extremes_i32`)."""
    k = kernels()
    if not k or sums.size == 0:
        return None
    rows = _rows_of(sums, sums.shape[-1])
    lo, hi = np.empty(rows.shape[1]), np.empty(rows.shape[1])
    (k.channel_extremes_i32 if sums.dtype in _I32_READABLE else k.channel_extremes)(rows, lo, hi)
    return lo, hi


def stage_extremes(sums: np.ndarray, fs: FloatStage
                   ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], tuple[int, int]] | None:
    """``(stage_u8(sums, fs), channel_extremes(sums), extreme pre-saturation codes of fs)`` in one compiled pass
    (speed, issue 37: an auto-range supernode's first computation needs them all when its range holds, the common
    case once it has settled), or None (no numba, more than one thread, sums that are not int32 / float32, an
    empty tensor)."""
    k = kernels()
    if not k or sums.size == 0 or sums.dtype not in _I32_READABLE or threads() > 1:
        return None
    rows = _rows_of(sums, fs.mm.size)
    out = np.empty(rows.shape, np.uint8)
    lo, hi, codes = np.empty(rows.shape[1]), np.empty(rows.shape[1]), np.empty(2)
    k.stage_extremes(rows, fs.mm, fs.off, out, lo, hi, codes)
    return out.reshape(sums.shape), (lo, hi), (math.floor(codes[0]), math.floor(codes[1]))


def _depthwise_setup(plan: DepthwisePlan, g: ConvGeometry, x_shape: tuple[int, ...]
                     ) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray], tuple[int, ...]]:
    """The loop's int32 weights ``[fh, fw, din * dmul]``, a function giving the zero-bordered input,
    and the output shape."""
    fh, fw, din, dmul = plan.w.shape
    # plan.wc is [fh, fw, dmul, din]; the loops want [fh, fw, din * dmul], channel c * dmul + m
    w = np.ascontiguousarray(plan.wc.transpose(0, 1, 3, 2).reshape(fh, fw, din * dmul).astype(np.int32))
    b, h, wd, _ = x_shape
    top, left = g.pad_top, g.pad_left
    padded = (b, top + h + g.pad_bottom, left + wd + g.pad_right, din)
    border = bool(top or left or g.pad_bottom or g.pad_right)
    x_zero = int(plan.x_zero)
    buf: list[np.ndarray] = []   # the zero-bordered input, border filled once (an engine runs one node at a time)

    def pad(x: np.ndarray) -> np.ndarray:
        if not border:
            return np.ascontiguousarray(x)
        if not buf:
            buf.append(np.full(padded, x_zero, np.uint8))
        xp = buf[0]
        xp[:, top:top + h, left:left + wd] = x
        return xp
    return w, pad, (b, g.out_h, g.out_w, din * dmul)


def depthwise_sums(x: np.ndarray, plan: DepthwisePlan, g: ConvGeometry) -> np.ndarray | None:
    """The exact depthwise sums as int32 ``[b, oh, ow, din * dmul]`` from one compiled loop, or None
    (no numba, sums that could leave int32, an empty tensor)."""
    k = kernels()
    key = (x.shape, g)
    setup = plan._rows.get(key)
    if setup is None:
        if not k or float(np.max(plan.bound, initial=0.0)) >= _I32_EXACT or 0 in x.shape:
            return None
        setup = plan._rows[key] = _depthwise_setup(plan, g, x.shape)
    elif not k:
        return None
    w, pad, out_shape = setup
    out = np.empty(out_shape, np.int32)
    _set_threads()
    if g.stride_w == 1 and plan.w.shape[3] == 1:   # a row at a time (compiled_kernels.depthwise_rows)
        tiled = plan._rows.get(("tiled", key))
        if tiled is None:
            tiled = plan._rows[("tiled", key)] = np.ascontiguousarray(np.tile(w, (1, 1, g.out_w)))
        _loop(k, "depthwise_rows")(pad(x), tiled, int(plan.x_zero), g.stride_h, out)
        return out
    _loop(k, "depthwise_sums")(pad(x), w, int(plan.x_zero), g.stride_h, g.stride_w, out)
    return out


def stage_u8(sums: np.ndarray, fs: FloatStage) -> np.ndarray | None:
    """``saturated(presat(sums, rq, fs))`` (:mod:`.output_stage.codes`) in one compiled pass (channel last), or
    None without numba."""
    k = kernels()
    if not k or sums.size == 0:
        return None
    rows = sums.reshape(-1, fs.mm.size)
    if not rows.flags.c_contiguous:
        rows = np.ascontiguousarray(rows)
    out = np.empty(rows.shape, np.uint8)
    _set_threads()
    _loop(k, "stage_rows")(rows, fs.mm, fs.off, out)
    return out.reshape(sums.shape)


def build_depthwise(plan: DepthwisePlan, g: ConvGeometry, x_shape: tuple[int, ...], fs: FloatStage
                    ) -> Callable[[np.ndarray], np.ndarray] | None:
    """A function ``x -> uint8 codes`` of one depthwise supernode on inputs of ``x_shape`` (fixed output
    range, exact float64 stage ``fs``), or None (no numba, or sums that could leave int32)."""
    k = kernels()
    if not k or float(np.max(plan.bound, initial=0.0)) >= _I32_EXACT or 0 in x_shape:
        return None
    w, pad, out_shape = _depthwise_setup(plan, g, x_shape)
    mm, off, x_zero = fs.mm, fs.off, int(plan.x_zero)

    def run(x: np.ndarray) -> np.ndarray:
        out = np.empty(out_shape, np.uint8)
        _set_threads()
        _loop(k, "depthwise_stage")(pad(x), w, x_zero, g.stride_h, g.stride_w, mm, off, out)
        return out
    return run


_ORT: Any = None
#: Smallest product (multiply-accumulates per run) given to onnxruntime: a session costs a few ms to set up,
#: which a smaller node would win back only after hundreds of runs.
ORT_MIN_MACS = 1 << 22


def _ort() -> Any:
    """onnxruntime, or False (not installed, or the compiled path is off / not yet warm)."""
    global _ORT
    if not _WARM[0] or not _enabled():
        return False
    if _ORT is None:
        try:
            import onnx  # noqa: F401 - the session's graph is built with onnx.helper
            import onnxruntime
            _ORT = onnxruntime
        except Exception:  # noqa: BLE001 - optional: any failure to load means "numpy path"
            _ORT = False
    return _ORT


def _matmul_session(plan: ConvPlan, w_zero: int, ort: Any) -> Any:
    """An onnxruntime session ``X [M, din] uint8 -> S [M, dout] int32``: ``MatMulInteger`` with the
    weights as uint8 codes around ``w_zero`` and both zero points (onnxruntime's U8U8 kernel: exact int32
    sums)."""
    from onnx import TensorProto, helper, numpy_helper
    w = np.rint(plan.wmat.astype(np.float64) + w_zero).astype(np.uint8)
    din = plan.shape[2]
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["X", "W", "XZ", "WZ"], ["S"])], "hexnn_matmul",
        [helper.make_tensor_value_info("X", TensorProto.UINT8, ["M", din])],
        [helper.make_tensor_value_info("S", TensorProto.INT32, ["M", plan.shape[3]])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.array(plan.x_zero, np.uint8), "XZ"),
         numpy_helper.from_array(np.array(w_zero, np.uint8), "WZ")])
    return _session(graph, ort)


def _uint8_zero(plan: ConvPlan) -> int | None:
    """A zero point ``z`` with ``wmat + z`` in 0..255: the weights' own (quint8 weights), or 128 for int8
    weights with zero point 0 (the XS3 layers); None when neither fits."""
    lo, hi = float(plan.wmat.min(initial=0.0)), float(plan.wmat.max(initial=0.0))
    for z in (plan.w_zero, 128):
        if z is not None and 0 <= z <= 255 and lo + z >= 0 and hi + z <= 255:
            return int(z)
    return None


def _conv_session(plan: ConvPlan, g: ConvGeometry, ort: Any) -> Any:
    """An onnxruntime session ``X [b, h, w, din] uint8 -> S [b, oh, ow, dout] float32``: the centred
    input (Cast, Sub), NCHW float32 ``Conv`` with the centred weights, back to NHWC. Exact when every
    partial sum is an integer below 2**24 (``plan.dtype`` is float32 only then), in any order of
    summation."""
    from onnx import TensorProto, helper, numpy_helper
    fh, fw, din, dout = plan.shape
    w = np.ascontiguousarray(plan.wmat.reshape(fh, fw, din, dout).transpose(3, 2, 0, 1), np.float32)
    nodes = [helper.make_node("Cast", ["X"], ["XF"], to=TensorProto.FLOAT),
             helper.make_node("Sub", ["XF", "XZ"], ["XC"]),
             helper.make_node("Transpose", ["XC"], ["XT"], perm=[0, 3, 1, 2]),
             helper.make_node("Conv", ["XT", "W"], ["ST"], kernel_shape=[fh, fw], strides=[g.stride_h, g.stride_w],
                              pads=[g.pad_top, g.pad_left, g.pad_bottom, g.pad_right]),
             helper.make_node("Transpose", ["ST"], ["S"], perm=[0, 2, 3, 1])]
    graph = helper.make_graph(nodes, "hexnn_conv", [helper.make_tensor_value_info("X", TensorProto.UINT8,
                                                                                  ["N", None, None, din])],
                              [helper.make_tensor_value_info("S", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(w, "W"),
                               numpy_helper.from_array(np.array(plan.x_zero, np.float32), "XZ")])
    return _session(graph, ort)


def _session(graph: Any, ort: Any) -> Any:
    from onnx import helper
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads()
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def conv_sums(x: np.ndarray, plan: ConvPlan, g: ConvGeometry) -> np.ndarray | None:
    """The exact sums ``[b, oh, ow, dout]`` of a convolution from onnxruntime, or None (no onnxruntime,
    sums it cannot give exactly, an empty input).

    - 1x1, stride 1, unpadded: ``MatMulInteger`` (uint8 x uint8, both zero points; int32 sums). Its U8U8
      kernels widen to 16 bits and accumulate in 32 bits, exact below 2**31 (the node's bound); its
      U8S8 kernel on AVX2 may saturate an intermediate 16-bit sum, so it is used only where the CPU has
      VNNI and the node's worst case proves it exact (:mod:`.compiled_int8`). The U8U8 weights need a
      uint8 form (:func:`_uint8_zero`). About 1.5-2x faster than the float32 BLAS product with its
      centring pass (:mod:`conv_core`).
    - otherwise, where the node's sums are exact in float32: a float32 ``Conv`` (:func:`_conv_session`);
      about 4x faster than numpy's im2col and BLAS product on a MobileNet's first layer.

    One session per node (of at least :data:`ORT_MIN_MACS` multiply-accumulates), kept on the plan; the
    first sums it gives are compared with numpy's and a node whose sums differ never uses it."""
    fh, fw, din, dout = plan.shape
    matmul = (fh, fw, g.stride_h, g.stride_w) == (1, 1, 1, 1) and not (g.pad_top or g.pad_bottom or g.pad_left
                                                                      or g.pad_right)
    key = ("ort", g)
    sess = plan.cache.get(key)
    if sess is None:
        ort = _ort()
        if not ort or x.size == 0:
            return None
        sess = False
        if x.shape[0] * g.out_h * g.out_w * fh * fw * din * dout < ORT_MIN_MACS:
            plan.cache[key] = sess   # too small to win back the session's set-up (a few ms)
            return None
        if matmul and float(np.max(plan.bound, initial=0.0)) < _I32_EXACT:
            # U8S8 where the CPU (VNNI) and the node's worst case make it exact, else U8U8 (compiled_int8)
            sess = u8s8_session(plan, ort, _session)
            plan.cache[("int8_kernel", g)] = "u8s8" if sess is not None else "u8u8"
            w_zero = _uint8_zero(plan) if sess is None else None
            sess = _matmul_session(plan, w_zero, ort) if w_zero is not None else (sess or False)
        elif plan.dtype is np.float32:
            sess = _conv_session(plan, g, ort)
        if sess is not False:
            got = _run_sums(sess, x, matmul, din, g, dout)
            from hexnn_import.ops.conv_core import conv_sum_at
            if not np.array_equal(got, conv_sum_at(x, plan, g)):
                sess = False
        plan.cache[key] = sess
    if sess is False:
        return None
    return _run_sums(sess, x, matmul, din, g, dout)


def _run_sums(sess: Any, x: np.ndarray, matmul: bool, din: int, g: ConvGeometry, dout: int) -> np.ndarray:
    if matmul:
        return sess.run(None, {"X": np.ascontiguousarray(x).reshape(-1, din)})[0].reshape(
            x.shape[0], g.out_h, g.out_w, dout)
    return sess.run(None, {"X": np.ascontiguousarray(x)})[0]


def compiled_replay(fn: Callable[[np.ndarray], np.ndarray] | None, x: np.ndarray, expected: np.ndarray
                    ) -> Callable[[np.ndarray], np.ndarray] | None:
    """``fn`` when it gives ``expected`` (the numpy path's codes) on ``x`` bit for bit, else None."""
    if fn is None:
        return None
    got = fn(x)
    if got.dtype != expected.dtype or got.shape != expected.shape or not np.array_equal(got, expected):
        return None
    return fn
