"""QuantizedMean_8's per-axis sums as the device stores them (op_reducing_mean.c, include/nn_reduce_utils.h; issue 36).

``reducing_mean_execute`` sums one listed axis at a time into the graph's scratch, in place: the first pass reads
the uint8 input (``reduce_sum_single_axis_hvx_8``), each later pass the int32 sums of the one before
(``reduce_sum_single_axis_hvx_32``). The later pass has two defects that decide the result once it has more than
one reduction batch (a non-reduced axis before the reduced one): it stores whole vectors with an aligned store at
``out_data + xd``, ``out_data`` advancing by ``blob_size`` words, so the store lands at the 128-byte boundary below
when that is not a whole vector; and its leftover count is ``blob_size % 128`` (words, where 32 was meant), so
``q6op_vstu_variable_ARV`` stores up to four vectors' worth of bytes (modulo the two vectors it can reach). Both
are deterministic (the device's results do not change with what the scratch held before: tools/hvx/op_mean.py), so
the engine replays the passes on a word-addressed model of the scratch here. The all-axes path
(``reduce_sum_all_axes_hvx``) and single-batch passes are exact sums and do not come here.
"""
from __future__ import annotations

import numpy as np

I64 = np.int64
_LANES = 32          # int32 lanes of a 128-byte HVX vector


def needs_replay(shape: tuple[int, ...], axes: list[int]) -> bool:
    """Whether a later pass over ``axes`` (0..3, in the order listed) has more than one reduction batch."""
    shp = list(shape)
    for k, a in enumerate(axes):
        if k and int(np.prod(shp[:a])) > 1:
            return True
        shp[a] = 1
    return False


def _store_aligned(mem: np.ndarray, addr: int, vec: np.ndarray) -> None:
    """``*(HVX_Vector *)p = v`` at word address ``addr``: the low address bits are dropped."""
    base = addr - addr % _LANES
    mem[base:base + _LANES] = vec


def _store_variable(mem: np.ndarray, addr: int, nwords: int, vec: np.ndarray) -> None:
    """``q6op_vstu_variable_ARV(addr, 4 * nwords, vec)`` (include/hvx_inlines.h, v62+): ``vec`` rotated to the
    address; lanes ``[r, min(r + n, 32))`` of the first vector, and when ``r + n > 32`` lanes below
    ``(r + n) % 32`` (all of them when that is 0) of the next one."""
    r, base = addr % _LANES, addr - addr % _LANES
    lanes = np.arange(_LANES)
    rot = vec[(lanes - r) % _LANES]
    right = r + nwords
    if right > _LANES:
        k = right % _LANES or _LANES
        mem[base + _LANES:base + _LANES + k] = rot[:k]
        mem[base + r:base + _LANES] = rot[r:]
    else:
        mem[base + r:base + right] = rot[r:right]


def _pass_8(x: np.ndarray, mem: np.ndarray, rb: int, nb: int, bs: int) -> None:
    """``reduce_sum_single_axis_hvx_8``: per batch, 128 sums per 32-word step (stored unaligned, exact), the
    ``bs % 32`` leftovers through the variable store."""
    xin = np.concatenate([x.reshape(-1).astype(I64), np.zeros(nb * bs + 256, I64)])
    for n in range(rb):
        src = xin[n * nb * bs:(n + 1) * nb * bs + 256]
        xd = 0
        while xd + 32 <= bs:
            rows = np.stack([src[i * bs + xd:i * bs + xd + 128] for i in range(nb)])
            mem[n * bs + xd:n * bs + xd + 128] = rows.sum(axis=0) & 0xFFFFFFFF
            xd += 32
        if bs % 32:
            rows = np.stack([src[i * bs + xd:i * bs + xd + 32] for i in range(nb)])
            _store_variable(mem, n * bs + xd, bs % 32, rows.sum(axis=0) & 0xFFFFFFFF)


def _pass_32(mem: np.ndarray, rb: int, nb: int, bs: int) -> None:
    """``reduce_sum_single_axis_hvx_32``, in place: aligned stores at ``n * bs + xd``, leftovers ``bs % 128``."""
    for n in range(rb):
        src, dst = n * nb * bs, n * bs
        xd = 0
        while xd + 32 <= bs:
            vec = np.stack([mem[src + i * bs + xd:src + i * bs + xd + 32] for i in range(nb)]).sum(axis=0)
            _store_aligned(mem, dst + xd, np.clip(vec, -2 ** 31, 2 ** 31 - 1))
            xd += 32
        if bs % 128:
            vec = np.stack([mem[src + i * bs + xd:src + i * bs + xd + 32] for i in range(nb)]).sum(axis=0)
            _store_variable(mem, dst + xd, bs % 128, np.clip(vec, -2 ** 31, 2 ** 31 - 1))


def device_sums(x: np.ndarray, axes: list[int]) -> np.ndarray:
    """The int64 sums ``set_output_scaling_for_mean`` reads for uint8 ``x`` (4-D) reduced over ``axes`` (0..3, in
    the order listed, each once), shaped as the output (reduced axes 1)."""
    shp = list(x.shape)
    mem = np.zeros(x.size + 1024, I64)
    for k, a in enumerate(axes):
        rb, nb, bs = int(np.prod(shp[:a])), shp[a], int(np.prod(shp[a + 1:]))
        if k == 0:
            _pass_8(x, mem, rb, nb, bs)
        else:
            _pass_32(mem, rb, nb, bs)
        shp[a] = 1
    words = mem[:int(np.prod(shp))]
    return (((words + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31).reshape(shp)
