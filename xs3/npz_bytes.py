"""The bytes numpy's ``savez`` puts in a buffer, without its per-member ``zipfile`` cost (issue 38: a
10,000-layer export spent a quarter of its time there; its one ``layers.npz`` holds 100,000 members).

An uncompressed ``.npz`` is a ZIP archive (PKWARE APPNOTE.TXT, sections 4.3.7 local file header, 4.3.12
central directory header, 4.3.16 end of central directory record) of ``<key>.npy`` members. numpy opens each
member with zipfile's ``ZipFile.open`` for writing with ``force_zip64=True``, on a seekable buffer: a local
header (version 4.5, no flags, stored, DOS time 1980-01-01 00:00, both 32-bit sizes 0xFFFFFFFF and a ZIP64
extra field of 20 bytes holding them), the member's ``.npy`` bytes (NEP 1: numpy's own header, then the
data), and, after the last member, the central directory (permissions ``?rw-------``, made on Unix) and the
end record, preceded past 65,535 members by the ZIP64 end record and its locator (4.3.14, 4.3.15; zipfile's
``_write_end_record``). :func:`npz_bytes` builds the same bytes with ``struct`` and caches each ``.npy`` header
by dtype, shape and order. The first call of a process checks itself against numpy's own bytes for its first
:data:`_CHECKED` arrays and, should the two ever differ (another Python's ``zipfile``, another numpy), every
later call is numpy's (tests/robust/test_scale_chains.py holds the ZIP64 end record, past 65,535 members, to
``np.savez``'s bytes).
"""
from __future__ import annotations

import io
import struct
import zlib
from itertools import islice
from typing import Mapping

import numpy as np

#: struct formats of zipfile (CPython Lib/zipfile.py ``structFileHeader`` / ``structCentralDir`` /
#: ``structEndArchive``)
_LOCAL = struct.Struct("<4s2B4HL2L2H")
_ZIP64_EXTRA = struct.Struct("<HHQQ")  # the ZIP64 extra field: its id, its size, the two sizes
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")
_END = struct.Struct("<4s4H2LH")
_END64 = struct.Struct("<4sQ2H2L4Q")  # zipfile.structEndArchive64
_LOCATOR64 = struct.Struct("<4sLQL")  # zipfile.structEndArchive64Locator
_COUNT_LIMIT = 0xFFFF  # zipfile.ZIP_FILECOUNT_LIMIT: more members take the ZIP64 end record
_DOSDATE = (0 << 9) | (1 << 5) | 1  # 1980-01-01, zipfile.ZipInfo's default date_time
_VERSION = 45  # zipfile.ZIP64_VERSION: FileHeader(zip64=True) raises the member's versions to it
_UNIX = 3  # create_system on anything but Windows
_MODE = 0o600 << 16  # external_attr zipfile gives a member opened for writing
_LIMIT = (1 << 31) - 1  # zipfile.ZIP64_LIMIT: an archive past it is left to np.savez

_headers: dict[tuple[np.dtype, str, tuple[int, ...], bool], bytes] = {}
#: how many arrays (the first) the first call compares with np.savez's bytes
_CHECKED = 16
_MAX_HEADERS = 4096
_state = {"checked": False, "exact": True}


def npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """``np.savez(io.BytesIO(), **arrays)``'s bytes (uncompressed), built directly."""
    if not _state["exact"]:
        return _savez(arrays)
    fast = _fast(arrays)
    if fast is None:
        return _savez(arrays)
    if not _state["checked"]:
        _state["checked"] = True
        sample = arrays if len(arrays) <= _CHECKED else dict(islice(arrays.items(), _CHECKED))
        _state["exact"] = (fast if sample is arrays else _fast(sample)) == _savez(sample)
        if not _state["exact"]:
            return _savez(arrays)
    return fast


def _savez(arrays: Mapping[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def _npy(arr: np.ndarray) -> bytes | None:
    """The ``.npy`` bytes of an array with a plain (legacy, object-free) dtype, else None (NEP 1: Fortran order
    only for an array that is F- and not C-contiguous, never one of fewer than 2 dimensions)."""
    shape = arr.shape
    fortran = len(shape) > 1 and bool(arr.flags.f_contiguous and not arr.flags.c_contiguous)
    dtype = arr.dtype
    key = (dtype, dtype.str, shape, fortran)
    header = _headers.get(key)
    if header is None:
        if dtype.hasobject or not type(dtype)._legacy:  # type: ignore[attr-defined]
            return None
        if len(_headers) >= _MAX_HEADERS:
            _headers.clear()
        buf = io.BytesIO()
        np.lib.format.write_array(buf, arr)
        whole = buf.getvalue()
        header = whole[: len(whole) - arr.nbytes]
        _headers[key] = header
    return header + arr.tobytes("F" if fortran else "C")


def _fast(arrays: Mapping[str, np.ndarray]) -> bytes | None:
    """The archive of ``<key>.npy`` members, or None when a member needs zipfile's rarer paths.

    Each member: its local record (the local header with both 32-bit sizes 0xFFFFFFFF and the ZIP64 extra field
    holding them, the name, the ``.npy`` bytes) and its central directory header (with the local record's offset)
    and name."""
    out = bytearray()  # appended to in place: a list of the 300,000 pieces of a 10,000-layer archive held 100 MB
    directory = bytearray()
    offset = 0
    local_pack, extra_pack, central_pack = _LOCAL.pack, _ZIP64_EXTRA.pack, _CENTRAL.pack
    crc32, version = zlib.crc32, _VERSION
    for key, val in arrays.items():
        data = _npy(val if type(val) is np.ndarray else np.asanyarray(val))
        name = key + ".npy"
        if data is None or not name.isascii() or "\0" in name:
            return None
        fname = name.encode("ascii")
        crc, size, n = crc32(data), len(data), len(fname)
        out += local_pack(b"PK\x03\x04", version, 0, 0, 0, 0, _DOSDATE, crc, 0xFFFFFFFF, 0xFFFFFFFF, n, 20)
        out += fname
        out += extra_pack(1, 16, size, size)
        out += data
        directory += central_pack(b"PK\x01\x02", version, _UNIX, version, 0, 0, 0, 0, _DOSDATE, crc, size, size, n,
                                  0, 0, 0, 0, _MODE, offset)
        directory += fname
        offset += 50 + n + size  # 30-byte header, name, 20-byte ZIP64 extra, data
        if offset > _LIMIT:
            return None
    if len(directory) > _LIMIT:
        return None
    count = len(arrays)
    end = b""
    if count > _COUNT_LIMIT:  # zipfile's ZIP64 end record and locator; the plain record then says 0xFFFF
        end = (_END64.pack(b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, len(directory), offset)
               + _LOCATOR64.pack(b"PK\x06\x07", 0, offset + len(directory), 1))
        count = _COUNT_LIMIT
    end += _END.pack(b"PK\x05\x06", 0, 0, count, count, len(directory), offset, 0)
    out += directory
    out += end
    return bytes(out)
