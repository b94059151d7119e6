"""QuantizedHashtableLookup_8 and LSHProjection (hexagon_nn_ops.txt).

QuantizedHashtableLookup_8: for each lookup value, the slice of ``values``
whose key equals it (``values [k, h, w, d]``, one slice per key); a lookup
with no key gives a slice filled with the code of 0.0 of the values range
and a hit code 0 (found: 1). The values range passes through; the hits
tensor is quint8 over ``[0, 255]`` so that its codes read as 0 / 1. Choices
where the text is silent: keys need not be sorted; with repeated keys the
first one counts; the values range must be sane.

LSHProjection: the Android NN / TFLite LSH projection. For hash function
``i`` and bit ``j`` the float32 seed ``hash[i, j]`` is prepended to each input
item's bytes and hashed with farmhash ``Fingerprint64``; the bit is 1 when
``sum(weight[item] * double(int64(fingerprint))) > 0``. Sparse (type 1: the
deprecated form, 3) outputs one int32 per hash function, the bits packed
MSB first, type 3 adding ``i * 2**bits``; dense (type 2) outputs every bit.
Items are the outermost non-1 dimension of the input ("First dimension
describes the number of items"); the bytes are the tensor's little-endian
storage. Weights are a scalar 1.0 (equal weights) or one per item, for
either type (the text allows both). ``bits <= 32`` as the text's hexagon_nn
implementation requires; type-3 sums that overflow int32 wrap.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.farmhash import fingerprint64_rows
from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import float_data, i32_codes, range_out, require_4d, u8_codes
from hexnn_import.ops.quant import quantize_u8
from hexnn_import.ops.registry import Kernel, KernelContext, register

LSH_SPARSE_DEPRECATED, LSH_DENSE, LSH_SPARSE = 1, 2, 3
MAX_LSH_BITS = 32


@register("QuantizedHashtableLookup_8")
class QuantizedHashtableLookup8(Kernel):
    """Value slices for each lookup key, with a 0 / 1 hits tensor."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        lookups_arr, keys_arr, values_arr, mn_arr, mx_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "values")
        lookups = i32_codes(ctx, np.asarray(lookups_arr), "lookups").reshape(-1)
        keys = i32_codes(ctx, np.asarray(keys_arr), "keys").reshape(-1)
        values = require_4d(ctx, u8_codes(ctx, values_arr, "values"), "values")
        if values.shape[0] != keys.size:
            raise ctx.fail(f"values has shape {list(values.shape)}: its first dimension must equal "
                           f"the {keys.size} keys")
        order = np.argsort(keys, kind="stable")
        pos = np.searchsorted(keys[order], lookups)
        pos_c = np.minimum(pos, max(keys.size - 1, 0))
        hit = (pos < keys.size) & (keys[order][pos_c] == lookups) if keys.size else np.zeros(lookups.size, bool)
        zero_code = quantize_u8(np.zeros(1), mn, mx)[0]
        out = np.full((lookups.size,) + values.shape[1:], zero_code, dtype=np.uint8)
        out[hit] = values[order[pos_c[hit]]]
        hits = hit.astype(np.uint8).reshape(1, 1, 1, -1)
        return (out, *range_out(mn, mx), hits, *range_out(0.0, 255.0))


def item_bytes(ctx: KernelContext, arr: np.ndarray) -> np.ndarray:
    """The input's storage as ``[items, bytes_per_item]`` uint8 (items = outermost non-1 dimension)."""
    a = np.asarray(arr)
    if a.dtype.kind not in "biuf":
        raise ctx.fail(f"input has dtype {a.dtype}, expected numeric data")
    dims = [int(s) for s in a.shape]
    while dims and dims[0] == 1:
        dims.pop(0)
    items = dims[0] if dims else 1
    if items == 0 or a.size == 0:
        raise ctx.fail(f"input has shape {list(a.shape)}: it holds no items")
    raw = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"))).view(np.uint8)
    return raw.reshape(items, -1)


def sign_bits(seeds: np.ndarray, items: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """One bit per seed: ``sum(w * double(int64(fingerprint64(seed_bytes + item)))) > 0``."""
    seed_bytes = np.ascontiguousarray(seeds.astype("<f4")).view(np.uint8).reshape(-1, 4)
    n_seed, n_item = seed_bytes.shape[0], items.shape[0]
    keys = np.concatenate([np.repeat(seed_bytes, n_item, axis=0), np.tile(items, (n_seed, 1))], axis=1)
    fp = fingerprint64_rows(keys).view(np.int64).astype(np.float64).reshape(n_seed, n_item)
    return ((fp * weights[None, :]).sum(axis=1) > 0).astype(np.int64)


@register("LSHProjection")
class LSHProjection(Kernel):
    """LSH projection: sparse (types 1, 3) ``[1,1,1,num_hash]`` or dense (type 2) ``[1,1,1,num_hash*bits]``."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        hash_arr, data, w_arr, type_arr = inputs
        hashes = float_data(ctx, hash_arr, "hash functions")
        if hashes.ndim != 4 or hashes.shape[0] != 1 or hashes.shape[1] != 1:
            raise ctx.fail(f"hash functions has shape {list(hashes.shape)}, expected [1, 1, num_hash, bits]")
        num_hash, bits = hashes.shape[2], hashes.shape[3]
        if not 1 <= bits <= MAX_LSH_BITS or num_hash < 1:
            raise ctx.fail(f"hash functions has shape {list(hashes.shape)}: 1..{MAX_LSH_BITS} bits "
                           "and at least one function are needed")
        kind = int_param(ctx, type_arr, "type")
        if kind not in (LSH_SPARSE_DEPRECATED, LSH_DENSE, LSH_SPARSE):
            raise ctx.fail(f"type {kind} is not 1 (sparse, deprecated), 2 (dense) or 3 (sparse)")
        items = item_bytes(ctx, data)
        weights = float_data(ctx, w_arr, "weights").reshape(-1)
        if weights.size == 1 and weights[0] == 1.0:
            weights = np.ones(items.shape[0])
        elif weights.size != items.shape[0]:
            raise ctx.fail(f"weights has {weights.size} values: give a scalar 1.0 or one per item "
                           f"({items.shape[0]} items)")
        bit = sign_bits(hashes.reshape(-1), items, weights).reshape(num_hash, bits)
        if kind == LSH_DENSE:
            return (bit.astype(np.int32).reshape(1, 1, 1, -1),)
        sig = (bit << np.arange(bits - 1, -1, -1, dtype=np.int64)[None, :]).sum(axis=1)
        if kind == LSH_SPARSE:
            sig = sig + np.arange(num_hash, dtype=np.int64) * (1 << bits)
        wrapped = ((sig + 2 ** 31) % 2 ** 32) - 2 ** 31
        return (wrapped.astype(np.int32).reshape(1, 1, 1, -1),)
