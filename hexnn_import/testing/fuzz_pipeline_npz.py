"""The pipeline fuzzer's input files: where an ``.npz`` keeps its structure, and edits of its arrays.

``run --input x.npz`` reads a zip archive (PKWARE APPNOTE.TXT: local file
headers, central directory, end records, zip64 extras as numpy writes them)
of ``.npy`` members (numpy's ``format.py``: magic, version, header length,
a dict literal with ``descr`` / ``fortran_order`` / ``shape``, then the
data). :func:`npz_structure` lists the truncation points, size / offset
fields and data scalars of a valid file for the byte-level mutations of
:mod:`fuzz_mutations`; :data:`NPZ_MUTATIONS` edit the arrays themselves:
a header that claims another or an absurd shape, another dtype (strings,
objects, big-endian, complex), keys renamed / dropped / added (``labels``
too), NaN and infinities, a deflated member that inflates to 1 GiB, a bare
``.npy`` instead of an archive, zip oddities (bzip2 / lzma members, the
encryption flag, an empty archive).
"""
from __future__ import annotations

import functools
import io
import random
import struct
import warnings
import zipfile
import zlib
from typing import Any, Callable

import numpy as np

from hexnn_import.testing.fuzz_mutations import Mutation
from hexnn_import.testing.fuzz_structure import Structure

_LOCAL, _CENTRAL, _EOCD = b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06"
#: bytes the inflating member claims (the issue's "4 MB of deflated zeros asks for 4 GiB", at 1/4 scale)
BOMB_BYTES = 1 << 30


# ---- structure --------------------------------------------------------------------------------
def npz_structure(buf: bytes) -> Structure:
    """Walk a zip of ``.npy`` members (or one bare ``.npy``) and record its structure (module doc)."""
    s = Structure(boundaries={0, len(buf)})
    try:
        if buf[:6] == b"\x93NUMPY":
            _npy_structure(buf, 0, len(buf), s)
            return s
        pos = 0
        while buf[pos:pos + 4] == _LOCAL:
            pos = _local_entry(buf, pos, s)
        _central(buf, s)
    except (struct.error, IndexError, ValueError):
        pass  # a partial structure is still a useful one
    return s


def _local_entry(buf: bytes, pos: int, s: Structure) -> int:
    method, = struct.unpack_from("<H", buf, pos + 8)
    csize, usize, nlen, xlen = struct.unpack_from("<IIHH", buf, pos + 18)
    s.boundaries.update({pos, pos + 30, pos + 30 + nlen})
    s.lengths += [(pos + 18, 4, "u32"), (pos + 22, 4, "u32"), (pos + 26, 2, "u16"), (pos + 28, 2, "u16")]
    s.values += [(pos + 6, 2, "flags"), (pos + 8, 2, "method"), (pos + 14, 4, "crc")]
    extra = pos + 30 + nlen
    k = extra
    while k + 4 <= extra + xlen:  # zip64 extra: 8-byte sizes replace 0xFFFFFFFF
        tag, size = struct.unpack_from("<HH", buf, k)
        if tag == 1:
            fields = [(k + 4 + 8 * j, 8, "u64") for j in range(size // 8)]
            s.lengths += fields
            if size >= 16:
                usize, csize = struct.unpack_from("<QQ", buf, k + 4)
        k += 4 + size
    data = extra + xlen
    s.boundaries.update({data, data + csize})
    if method == 0:
        _npy_structure(buf, data, data + csize, s)
    return data + csize


def _npy_structure(buf: bytes, start: int, end: int, s: Structure) -> None:
    """Magic, version, header length (u16 in version 1, u32 in 2 and 3), header dict tokens, data scalars."""
    major = buf[start + 6]
    width = 2 if major == 1 else 4
    hlen, = struct.unpack_from("<H" if width == 2 else "<I", buf, start + 8)
    head = start + 8 + width
    s.boundaries.update({start + 6, start + 8, head, head + hlen})
    s.lengths.append((start + 8, width, "u16" if width == 2 else "u32"))
    s.values.append((start + 6, 1, "npy_version"))
    text = buf[head:head + hlen]
    s.boundaries.update(head + i + 1 for i, c in enumerate(text) if c in b"{}(),:'")
    descr = text.split(b"'descr':")[-1].split(b",")[0].strip(b" '")
    body = head + hlen
    item = 4 if descr in (b"<f4", b"<i4") else 1
    count = (end - body) // item
    for j in range(0, count, max(1, count // 48)):
        s.values.append((body + j * item, item, "f32" if descr == b"<f4" else "i8"))


def _central(buf: bytes, s: Structure) -> None:
    """Central directory entries and the end records: sizes, name lengths, offsets, counts."""
    end = buf.rfind(_EOCD)
    if end < 0:
        return
    s.boundaries.update({end, end + 22})
    s.lengths += [(end + 8, 2, "u16"), (end + 10, 2, "u16"), (end + 12, 4, "u32"), (end + 20, 2, "u16")]
    s.indices.append((end + 16, 4, "cd_offset"))
    pos = buf.find(_CENTRAL)
    while 0 <= pos < end and buf[pos:pos + 4] == _CENTRAL:
        nlen, xlen, clen = struct.unpack_from("<HHH", buf, pos + 28)
        s.boundaries.update({pos, pos + 46, pos + 46 + nlen})
        s.lengths += [(pos + 20, 4, "u32"), (pos + 24, 4, "u32"), (pos + 28, 2, "u16"), (pos + 30, 2, "u16")]
        s.indices.append((pos + 42, 4, "local_offset"))
        pos += 46 + nlen + xlen + clen
    z64 = buf.rfind(b"PK\x06\x06", 0, end)
    if z64 >= 0:
        s.boundaries.add(z64)
        s.lengths += [(z64 + 24, 8, "u64"), (z64 + 32, 8, "u64"), (z64 + 40, 8, "u64")]
        s.indices.append((z64 + 48, 8, "cd_offset"))


# ---- writing ----------------------------------------------------------------------------------
def npy_header(shape: tuple[int, ...], descr: str, fortran: bool = False) -> bytes:
    """A version-1 ``.npy`` header claiming ``shape`` of ``descr`` (numpy's format.py layout)."""
    text = f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {tuple(shape)!r}, }}"
    pad = 64 - (10 + len(text) + 1) % 64
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text) + pad + 1) + text.encode("latin1") + b" " * pad + b"\n"


def npy_bytes(arr: np.ndarray) -> bytes:
    """``arr`` as a ``.npy`` file (pickle allowed only for object arrays, which the reader must refuse)."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=arr.dtype.kind == "O")
    return buf.getvalue()


def zip_members(members: list[tuple[str, bytes]], method: int = zipfile.ZIP_STORED) -> bytes:
    """A zip archive of ``(name, bytes)`` members (duplicate names kept, as a hand-made file may have them), dated
    1980-01-01 as numpy's own are (a name alone takes the clock's time: a case's bytes changed between runs)."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name"
        with zipfile.ZipFile(buf, "w", method) as z:
            for name, data in members:
                info = zipfile.ZipInfo(name)
                info.compress_type = method
                z.writestr(info, data)
    return buf.getvalue()


@functools.lru_cache(maxsize=4)
def _deflated_zeros(nbytes: int) -> bytes:
    """``nbytes`` zero bytes as the end of a raw deflate stream (as zip stores it); made once.

    A full flush ends a block on a byte boundary and forgets the history, so the blocks of one 16 MiB
    chunk of zeros, repeated, inflate to as many chunks: no need to deflate 1 GiB.
    """
    chunk = 1 << 24
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = comp.compress(bytes(chunk)) + comp.flush(zlib.Z_FULL_FLUSH)
    return block * (nbytes // chunk) + comp.flush()


def bomb_member(name: str, shape: tuple[int, ...], descr: str) -> bytes:
    """A zip of one deflated member: a header claiming ``shape`` then :data:`BOMB_BYTES` of zeros."""
    head = npy_header(shape, descr)
    zeros = _deflated_zeros(BOMB_BYTES)
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    # the header in blocks of its own (a full flush ends them on a byte boundary), then the zeros' stream
    data = comp.compress(head) + comp.flush(zlib.Z_FULL_FLUSH) + zeros
    crc = _crc_of_zeros_after(zlib.crc32(head))
    usize = len(head) + BOMB_BYTES
    fname = name.encode()
    local = struct.pack("<4sHHHHHIIIHH", _LOCAL, 20, 0, 8, 0, 0x21, crc, len(data), usize, len(fname), 0) + fname
    central = struct.pack("<4sHHHHHHIIIHHHHHII", _CENTRAL, 20, 20, 0, 8, 0, 0x21, crc, len(data), usize,
                          len(fname), 0, 0, 0, 0, 0, 0) + fname
    eocd = struct.pack("<4sHHHHIIH", _EOCD, 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    return local + data + central + eocd


@functools.lru_cache(maxsize=8)
def _crc_of_zeros_after(crc_a: int) -> int:
    """The CRC-32 of some bytes (CRC ``crc_a``) followed by :data:`BOMB_BYTES` zeros (the member's CRC)."""
    crc, chunk = crc_a, bytes(1 << 24)
    for _ in range(BOMB_BYTES // len(chunk)):
        crc = zlib.crc32(chunk, crc)
    return crc


# ---- edits of the arrays ----------------------------------------------------------------------
@functools.lru_cache(maxsize=16)
def _seed_arrays(data: bytes) -> tuple[tuple[str, np.ndarray], ...]:
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return tuple((k, z[k]) for k in z.files)


def _npz_edit(edit: Callable[[list[tuple[str, Any]], random.Random], Any]) -> Mutation:
    """A mutation that edits the seed's ``[(key, array or raw .npy bytes)]`` and writes a new archive
    (stored, or deflated one time in three); an edit may return the file's bytes itself."""
    def mutate(data: bytes, st: Structure, rng: random.Random) -> bytes:
        members: list[tuple[str, Any]] = [(k, a.copy()) for k, a in _seed_arrays(data)]
        done = edit(members, rng)
        if isinstance(done, bytes):
            return done
        raw = [(k + ".npy", v if isinstance(v, bytes) else npy_bytes(v)) for k, v in members]
        return zip_members(raw, zipfile.ZIP_DEFLATED if rng.random() < 0.33 else zipfile.ZIP_STORED)

    mutate.__doc__ = edit.__doc__
    return mutate


_HUGE_SHAPES = ((1, 100000, 100000, 3), (1 << 31,), (1 << 40, 1), (1 << 62, 4), (0x7FFFFFFF, 2, 2, 2))


def _npz_shape(members: list[tuple[str, Any]], rng: random.Random) -> Any:
    """A member of another shape: batch 2 or 8 (valid data), a dim dropped or added, zero-size, a scalar,
    or a header claiming a huge shape over a few bytes (the 228-byte .npy); rarely a 1 GiB deflate bomb."""
    k = rng.randrange(len(members))
    name, arr = members[k]
    how = rng.randrange(7)
    if how == 0:
        members[k] = (name, np.concatenate([arr] * rng.choice((2, 8))))
    elif how == 1:
        members[k] = (name, arr.reshape(arr.shape[1:] or (1,)) if rng.random() < 0.5 else arr[None])
    elif how == 2:
        members[k] = (name, arr.reshape(-1))
    elif how == 3:
        members[k] = (name, np.zeros((0,) + arr.shape[1:], arr.dtype))
    elif how == 4:
        members[k] = (name, arr.reshape(-1)[:1].reshape(()))
    elif how == 5 and rng.random() < 0.15:
        rest = arr.shape[1:] or (1,)
        n = max(1, BOMB_BYTES // (int(np.prod(rest)) * arr.dtype.itemsize))
        return bomb_member(name + ".npy", (n,) + tuple(rest), arr.dtype.str)
    else:
        members[k] = (name, npy_header(rng.choice(_HUGE_SHAPES), arr.dtype.str) + arr.tobytes()[:64])
    return None


_DTYPES = ("<f8", "<f2", "<i4", "<i8", "|i1", "|u1", "|b1", "<c8", ">f4", ">i4", "<U4", "|S3", "<M8[s]", "<m8[s]")


def _npz_dtype(members: list[tuple[str, Any]], rng: random.Random) -> Any:
    """A member of another dtype (float64/16, other integers, bool, complex, big-endian, strings, dates),
    an object array (needs pickle), a void dtype, or a header whose descr numpy cannot parse."""
    k = rng.randrange(len(members))
    name, arr = members[k]
    how = rng.randrange(10)
    if how < 7:
        dt = np.dtype(rng.choice(_DTYPES))
        members[k] = (name, arr.astype(dt) if dt.kind not in "USMm" else arr.astype(np.int64).astype(dt))
    elif how == 7:
        members[k] = (name, npy_bytes(np.array([arr, None], dtype=object)))
    elif how == 8:
        members[k] = (name, npy_header(arr.shape, rng.choice(("V4", "|V0", "<f4,<i4"))) + arr.tobytes())
    else:
        members[k] = (name, npy_header(arr.shape, rng.choice(("foo", "<f3", "", "O"))) + arr.tobytes())
    return None


def _npz_keys(members: list[tuple[str, Any]], rng: random.Random) -> Any:
    """Keys renamed (to another input's name, odd or very long names), dropped, doubled; extra arrays,
    ``labels`` of several kinds (in range, out of range, strings, more than the samples)."""
    k = rng.randrange(len(members))
    name, arr = members[k]
    how = rng.randrange(5)
    if how == 0:
        new = rng.choice(("x", "", "labels", "../up", "dir/in", "a" * 300, "input:0", "\u00e9t\u00e9", name.upper()))
        members[k] = (new, arr)
    elif how == 1:
        del members[k]
    elif how == 2:
        members.insert(rng.randrange(len(members) + 1), (name, arr))
    elif how == 3:
        members.append((rng.choice(("extra", "y", "input_2")), arr))
    else:
        labels = rng.choice((np.array([3]), np.array([10 ** 6]), np.array([-1]), np.array(["cat"]),
                             np.arange(50), np.array([1.5]), np.array([[1, 2]]), np.array([], np.int64)))
        members.append(("labels", labels))
    return None


_SPECIAL = (np.nan, np.inf, -np.inf, 3.4e38, -3.4e38, 1e-45, -0.0)


def _npz_values(members: list[tuple[str, Any]], rng: random.Random) -> Any:
    """Values at the edges: NaN, infinities, the largest floats, denormals; integers all at min or max."""
    k = rng.randrange(len(members))
    name, arr = members[k]
    if arr.dtype.kind == "f":
        flat = arr.reshape(-1)
        if rng.random() < 0.5:
            flat[:] = rng.choice(_SPECIAL)
        else:
            for _ in range(rng.randint(1, 8)):
                flat[rng.randrange(flat.size)] = rng.choice(_SPECIAL)
    elif arr.dtype.kind in "iu":
        info = np.iinfo(arr.dtype)
        arr[...] = rng.choice((info.min, info.max))
    members[k] = (name, arr)
    return None


def _npz_file(members: list[tuple[str, Any]], rng: random.Random) -> Any:
    """The file as a whole: a bare .npy (of the first array, or claiming a huge shape), an empty archive,
    bzip2 / lzma members, the encryption flag set, text that is no archive at all."""
    name, arr = members[0]
    how = rng.randrange(6)
    if how == 0:
        return npy_bytes(arr)
    if how == 1:
        return npy_header(rng.choice(_HUGE_SHAPES), arr.dtype.str) + arr.tobytes()[:64]
    if how == 2:
        return zip_members([])
    if how == 3:
        raw = [(k + ".npy", npy_bytes(a)) for k, a in members]
        return zip_members(raw, rng.choice((zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)))
    if how == 4:
        data = bytearray(zip_members([(k + ".npy", npy_bytes(a)) for k, a in members]))
        data[6] |= 1  # general purpose flag bit 0: encrypted
        return bytes(data)
    return rng.choice((b"", b"PK", b"not an archive\n", b"\x93NUMPY", b"PK\x05\x06" + bytes(18)))


NPZ_MUTATIONS: tuple[tuple[str, Mutation], ...] = (
    ("npz_shape", _npz_edit(_npz_shape)), ("npz_dtype", _npz_edit(_npz_dtype)),
    ("npz_keys", _npz_edit(_npz_keys)), ("npz_values", _npz_edit(_npz_values)),
    ("npz_file", _npz_edit(_npz_file)),
)

__all__ = ["BOMB_BYTES", "NPZ_MUTATIONS", "bomb_member", "npy_bytes", "npy_header", "npz_structure", "zip_members"]
