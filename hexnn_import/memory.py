"""The memory budget: refuse, before allocating, anything that would need more memory than the machine allows.

Issue 20 ("[Robust] The whole pipeline under bad input", finding 4): a 4 MB
``.npz`` of deflated zeros asked for 4 GiB, a 228-byte ``.npy`` whose header
claimed ``[1, 100000, 100000, 3]`` asked for 112 GiB, and a 472-byte TFLite
declared a 2^31-element tensor. Each is now measured from what the file
*declares* (an array header, a tensor shape, an activation plan) and refused
with :class:`~hexnn_import.errors.ResourceError` when above the budget.

The budget (docs/limits.md) is, first to last: the value given to
:func:`set_budget` (the CLI's ``--max-memory``), the environment variable
``HEXNN_MAX_MEMORY``, or half of the physical memory (``os.sysconf``; 8 GiB
when the platform does not say). Sizes are written ``2G``, ``512M``,
``100k`` or a plain number of bytes, in binary units (:func:`parse_size`).

Array files are checked from their headers only (:func:`check_array_file`):
the ``.npy`` format (numpy ``numpy/lib/format.py``, NEP 1: magic, version,
header dict) and, for ``.npz``, the zip central directory (each member's
declared uncompressed size) plus the first bytes of each member's stream.
"""
from __future__ import annotations

import io
import lzma
import math
import os
import re
import struct
import zipfile
import zlib
from pathlib import Path
from typing import IO, Mapping

import numpy as np
from numpy.lib import format as npformat

from hexnn_import.errors import HexnnError, InputDataError, ResourceError

#: what reading a damaged .npy / .npz can raise besides ValueError / OSError: a bad CRC, a damaged
#: deflate / bz2 / lzma stream, a compression method zipfile lacks, a truncated member
NPZ_READ_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error,
                                                    lzma.LZMAError, NotImplementedError)

#: Environment variable holding the budget (e.g. ``HEXNN_MAX_MEMORY=4G``).
BUDGET_ENV = "HEXNN_MAX_MEMORY"
#: Fraction of physical memory used when neither --max-memory nor HEXNN_MAX_MEMORY is given.
DEFAULT_FRACTION = 0.5
#: Budget when the platform does not report its physical memory.
FALLBACK_BYTES = 8 << 30

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_budget: int | None = None


def parse_size(text: str) -> int:
    """``"2G"`` -> 2 GiB, ``"512M"``, ``"100k"``, ``"123"`` bytes (binary units; ``"2GiB"``, ``"1.5G"`` too)."""
    m = _SIZE.match(str(text))
    value = float(m.group(1)) * _UNITS[m.group(2).lower()] if m else 0.0
    if not m or not math.isfinite(value) or value < 1:
        raise InputDataError(f"memory size '{text}': expected a positive size such as 2G, 512M, 100k "
                             f"or a number of bytes")
    return int(value)


def set_budget(nbytes: int | None) -> None:
    """Fix the budget for this process (``--max-memory``); None returns to the environment / default."""
    global _budget
    if nbytes is not None and nbytes < 1:
        raise InputDataError(f"memory budget {nbytes}: expected a positive number of bytes")
    _budget = None if nbytes is None else int(nbytes)


def explicit_budget() -> int | None:
    """The budget :func:`set_budget` fixed for this process (``--max-memory``), or None (for worker
    processes, which take it along: ``compare --jobs``)."""
    return _budget


def budget_bytes() -> int:
    """The budget in bytes: :func:`set_budget`'s value, else ``$HEXNN_MAX_MEMORY``, else half the physical memory."""
    if _budget is not None:
        return _budget
    env = os.environ.get(BUDGET_ENV, "").strip()
    if env:
        try:
            return parse_size(env)
        except InputDataError as exc:
            raise InputDataError(f"{BUDGET_ENV}: {exc}") from exc
    return default_budget()


def default_budget() -> int:
    """:data:`DEFAULT_FRACTION` of the physical memory (``SC_PAGE_SIZE * SC_PHYS_PAGES``), or :data:`FALLBACK_BYTES`."""
    try:
        total = int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        total = 0
    return int(total * DEFAULT_FRACTION) if total > 0 else FALLBACK_BYTES


def format_size(nbytes: int) -> str:
    """``120259084288`` -> ``"112.0 GiB"`` (binary units, one decimal; plain bytes below 1 KiB)."""
    if nbytes < 1024:
        return f"{nbytes} bytes"
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift or unit == "KiB":
            return f"{nbytes / (1 << shift):.1f} {unit}"
    return f"{nbytes} bytes"  # pragma: no cover - the loop always returns


def check_bytes(nbytes: int, what: str) -> None:
    """ResourceError when ``nbytes`` is above the budget, e.g. "input x.npz:x would need 112.0 GiB, above ..."."""
    budget = budget_bytes()
    if nbytes > budget:
        raise ResourceError(f"{what} would need {format_size(nbytes)}, above the memory budget of "
                            f"{format_size(budget)} (--max-memory / {BUDGET_ENV})")


def shape_bytes(shape: "tuple[int, ...] | list[int]", itemsize: int) -> int:
    """Bytes of an array of ``shape`` and ``itemsize``, in Python integers (never overflows)."""
    return math.prod(int(d) for d in shape) * int(itemsize)


def check_array_file(path: "str | os.PathLike", expected: Mapping[str, "tuple[int, ...] | None"] | None = None,
                     *, role: str = "input") -> None:
    """Check a ``.npy`` / ``.npz`` from its headers alone, before any array data is read.

    Refuses (InputDataError / ResourceError, one line) an array that would need
    more than the budget (alone, or all arrays together), whose declared size
    disagrees with its header (a truncated or padded member), whose dtype holds
    Python objects, or whose shape does not fit ``expected`` (``{input name:
    shape or None}``). An array fits an input of shape S when it has S's
    number of elements, or a leading sample axis of any length followed by
    S's elements or by S's dimensions after the batch (what ``run``,
    ``compare --data`` and ``--calibration`` accept). Names are matched as the
    loaders do (one unnamed array feeds a single input); missing or extra
    names are left to the loaders. A file that is neither format is left to
    them too. ``role`` starts the messages ("input x.npz:x ...", "calibration samples ...").
    """
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            head = fh.read(6)
            if head.startswith(_NPY_MAGIC):
                fh.seek(0)
                shape, dtype, offset = _read_header(fh, str(p))
                arrays = {"": (shape, dtype)}
                declared = {"": (os.path.getsize(p) - offset, False)}
            elif head[:4] in _ZIP_MAGICS:
                arrays, declared = _npz_headers(p)
            else:
                return
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return  # the loader says so in its own words
    except HexnnError:
        raise
    except Exception as exc:  # noqa: BLE001 - untrusted bytes: zipfile, zlib and numpy's header parser
        # (tokenize, ast) raise many unrelated types on a corrupt file; each means "not readable"
        raise InputDataError(f"{p}: not a .npy/.npz file numpy can read ({type(exc).__name__}: "
                             f"{_one_line(exc)})") from exc
    total = 0
    for key, (shape, dtype) in arrays.items():
        what = f"{role} {p}" + (f":{key}" if key else "")
        if dtype is not None and dtype.hasobject:
            raise InputDataError(f"{what}: dtype {dtype} holds Python objects (needs pickle, which is refused)")
        nbytes = shape_bytes(shape, 1 if dtype is None else dtype.itemsize)
        check_bytes(nbytes, what)
        if dtype is not None:
            _check_declared(what, shape, dtype, *declared[key])
        total += nbytes
    if len(arrays) > 1:
        check_bytes(total, f"{role} {p} ({len(arrays)} arrays together)")
    if expected:
        _check_expected(p, {k: v for k, v in arrays.items() if v[1] is not None}, expected, role)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _read_header(fh: IO[bytes], what: str) -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape, dtype, bytes consumed) from an open stream at the start of a ``.npy`` (format 1.0, 2.0, 3.0)."""
    version = npformat.read_magic(fh)
    if version == (1, 0):
        shape, _, dtype = npformat.read_array_header_1_0(fh)
        consumed = npformat.MAGIC_LEN + 2
    elif version in ((2, 0), (3, 0)):
        raw_len = fh.read(4)
        (hlen,) = struct.unpack("<I", raw_len)
        if hlen > 10000:  # numpy's own max_header_size
            raise ValueError(f"header of {hlen} bytes is larger than numpy reads")
        raw = fh.read(hlen)
        # the 3.0 header is utf-8 (field names); only shape and dtype size matter here
        shape, _, dtype = npformat.read_array_header_2_0(io.BytesIO(raw_len + raw))
        consumed = npformat.MAGIC_LEN + 4
    else:
        raise ValueError(f"{what}: .npy format version {version} is not one numpy writes")
    return tuple(int(d) for d in shape), np.dtype(dtype), _header_end(fh, consumed)


def _header_end(fh: IO[bytes], fallback: int) -> int:
    try:
        return int(fh.tell())
    except (OSError, AttributeError, ValueError):
        return fallback


def _npz_headers(p: Path) -> tuple[dict[str, tuple[tuple[int, ...], "np.dtype | None"]],
                                    dict[str, tuple[int, bool]]]:
    """``{key: (shape, dtype)}`` of every member, from the central directory and each member's first bytes,
    and ``{key: (declared data bytes, True)}`` (the member's uncompressed size less its header).

    A member that is not a ``.npy`` (numpy hands those out as raw bytes) is
    ``((declared size,), None)``.
    """
    out: dict[str, tuple[tuple[int, ...], np.dtype | None]] = {}
    declared: dict[str, tuple[int, bool]] = {}
    with zipfile.ZipFile(p) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            with zf.open(info) as member:
                magic = member.read(len(_NPY_MAGIC))
                if magic != _NPY_MAGIC:
                    out[key] = ((int(info.file_size),), None)
                    continue
                stream = _Prefixed(magic, member)
                shape, dtype, used = _read_header(stream, f"{p}:{key}")
                used = stream.consumed
            declared[key] = (int(info.file_size) - used, True)
            out[key] = (shape, dtype)
    return out, declared


class _Prefixed(io.RawIOBase):
    """A read-only stream: already-read ``prefix`` bytes, then ``rest`` (a zip member); counts bytes read."""

    def __init__(self, prefix: bytes, rest: IO[bytes]):
        super().__init__()
        self._prefix, self._rest, self.consumed = prefix, rest, 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            raise ValueError("unbounded read of a zip member header")
        head, self._prefix = self._prefix[:n], self._prefix[n:]
        data = head + (self._rest.read(n - len(head)) if n > len(head) else b"")
        self.consumed += len(data)
        return data


def _check_declared(what: str, shape: tuple[int, ...], dtype: np.dtype, data_bytes: int, exact: bool) -> None:
    """The bytes after the header must hold the array (exactly, for a zip member whose size is declared)."""
    if dtype.hasobject:
        return  # refused by the caller with its own message
    need = shape_bytes(shape, dtype.itemsize)
    if data_bytes < need or (exact and data_bytes != need):
        raise InputDataError(f"{what}: its header declares shape {list(shape)} {dtype} ({format_size(need)}) "
                             f"but the file holds {format_size(max(data_bytes, 0))} of data (truncated or altered)")


def _check_expected(p: Path, arrays: Mapping[str, tuple[tuple[int, ...], "np.dtype | None"]],
                    expected: Mapping[str, "tuple[int, ...] | None"], role: str = "input") -> None:
    data = {k: v for k, v in arrays.items() if k != "labels"}
    if len(expected) == 1 and len(data) == 1:
        (name,), (key,) = list(expected), list(data)
        pairs = [(name, key)]
    else:
        pairs = [(name, name) for name in expected if name in data]
    for name, key in pairs:
        want = expected[name]
        shape = data[key][0]
        if want is None or _fits(shape, tuple(int(d) for d in want)):
            continue
        where = f"{p}" + (f":{key}" if key else "")
        samples = f" ({shape[0]} samples of shape {list(shape[1:])})" if len(shape) > 1 else ""
        raise InputDataError(f"{role} {where} has shape {list(shape)}{samples}; the model's input '{name}' takes "
                             f"{list(want)} (or that with a leading sample axis)")


def _fits(shape: tuple[int, ...], want: tuple[int, ...]) -> bool:
    """``shape`` holds one input of shape ``want``, or N along axis 0 (whole samples, or a batch)."""
    if any(d <= 0 for d in want):  # a dynamic or empty dimension: nothing to compare
        return True
    size, per_sample = math.prod(shape), math.prod(shape[1:]) if shape else 1
    return size == math.prod(want) or (len(shape) >= 1 and per_sample in (math.prod(want), math.prod(want[1:])))
