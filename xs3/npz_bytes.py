"""The bytes numpy's ``savez`` puts in a buffer, without its per-member ``zipfile`` cost (issue 38: a
10,000-layer export spent a quarter of its time there).

An uncompressed ``.npz`` is a ZIP archive (PKWARE APPNOTE.TXT, sections 4.3.7 local file header, 4.3.12
central directory header, 4.3.16 end of central directory record) of ``<key>.npy`` members. numpy opens each
member with zipfile's ``ZipFile.open`` for writing with ``force_zip64=True``, on a seekable buffer: a local
header (version 4.5, no flags, stored, DOS time 1980-01-01 00:00, both 32-bit sizes 0xFFFFFFFF and a ZIP64
extra field of 20 bytes holding them), the member's ``.npy`` bytes (NEP 1: numpy's own header, then the
data), and, after the last member, the central directory (permissions ``?rw-------``, made on Unix) and the
end record. :func:`npz_bytes` builds the same bytes with ``struct`` and caches each ``.npy`` header by dtype,
shape and order. The first call of a process checks itself against numpy's own bytes for its arrays and,
should the two ever differ (another Python's ``zipfile``, another numpy), every later call is numpy's.
"""
from __future__ import annotations

import io
import struct
import zlib
from typing import Mapping

import numpy as np

#: struct formats of zipfile (CPython Lib/zipfile.py ``structFileHeader`` / ``structCentralDir`` /
#: ``structEndArchive``)
_LOCAL = struct.Struct("<4s2B4HL2L2H")
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")
_END = struct.Struct("<4s4H2LH")
_ZIP64_EXTRA = struct.Struct("<HHQQ")
_DOSDATE = (0 << 9) | (1 << 5) | 1  # 1980-01-01, zipfile.ZipInfo's default date_time
_VERSION = 45  # zipfile.ZIP64_VERSION: FileHeader(zip64=True) raises the member's versions to it
_UNIX = 3  # create_system on anything but Windows
_MODE = 0o600 << 16  # external_attr zipfile gives a member opened for writing
_LIMIT = (1 << 31) - 1  # zipfile.ZIP64_LIMIT: beyond it (and past 65,535 members) leave it to np.savez

_headers: dict[tuple[np.dtype, str, tuple[int, ...], bool], bytes] = {}
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
        _state["exact"] = fast == _savez(arrays)
        if not _state["exact"]:
            return _savez(arrays)
    return fast


def _savez(arrays: Mapping[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def _npy(arr: np.ndarray) -> bytes | None:
    """The ``.npy`` bytes of an array with a plain (legacy, object-free) dtype, else None."""
    if arr.dtype.hasobject or not type(arr.dtype)._legacy:  # type: ignore[attr-defined]
        return None
    fortran = bool(arr.flags.f_contiguous and not arr.flags.c_contiguous)
    key = (arr.dtype, arr.dtype.str, arr.shape, fortran)
    header = _headers.get(key)
    if header is None:
        if len(_headers) >= _MAX_HEADERS:
            _headers.clear()
        buf = io.BytesIO()
        np.lib.format.write_array(buf, arr)
        whole = buf.getvalue()
        header = whole[: len(whole) - arr.nbytes]
        _headers[key] = header
    return header + arr.tobytes("F" if fortran else "C")


def _fast(arrays: Mapping[str, np.ndarray]) -> bytes | None:
    """The archive of ``<key>.npy`` members, or None when a member needs zipfile's rarer paths."""
    if len(arrays) > 0xFFFF:
        return None
    parts: list[bytes] = []
    central: list[bytes] = []
    offset = 0
    for key, val in arrays.items():
        name = f"{key}.npy"
        if not name.isascii() or "\0" in name:
            return None
        data = _npy(np.asanyarray(val))
        if data is None or len(data) > _LIMIT:
            return None
        fname = name.encode("ascii")
        crc, size = zlib.crc32(data), len(data)
        extra = _ZIP64_EXTRA.pack(1, 16, size, size)
        parts += [_LOCAL.pack(b"PK\x03\x04", _VERSION, 0, 0, 0, 0, _DOSDATE, crc, 0xFFFFFFFF, 0xFFFFFFFF, len(fname),
                              len(extra)), fname, extra, data]
        central += [_CENTRAL.pack(b"PK\x01\x02", _VERSION, _UNIX, _VERSION, 0, 0, 0, 0, _DOSDATE, crc, size,
                                  size, len(fname), 0, 0, 0, 0, _MODE, offset), fname]
        offset += _LOCAL.size + len(fname) + len(extra) + size
        if offset > _LIMIT:
            return None
    directory = b"".join(central)
    end = _END.pack(b"PK\x05\x06", 0, 0, len(arrays), len(arrays), len(directory), offset, 0)
    return b"".join(parts) + directory + end
