"""The depth-32 layout of hexagon_nn: a padded byte array, not a flat tensor with a flag (SEMANTICS.md §7).

A d32 tensor of logical shape ``[b, h, w, d]`` is stored as the array
``data[b][h_total][d_total/32][w_total][32]`` with

- ``h_total = top + h + bottom``,
- ``w_total = left + w + right`` (a multiple of 4),
- ``d_total = before + d + after`` (a multiple of 32),

so element ``(b, y, x, c)`` lives at the flat byte (element) address
``((b*h_total + y+top) * d_total/32 + (c+before)//32) * w_total*32 + (x+left)*32 + (c+before)%32``
(:meth:`D32Tensor.address`). Padding elements are garbage: no _d32 op may read
them as data. The layout is generic over the element type: quint8 (uint8)
tensors are the usual case; the 16-bit test ops store int16 elements in the
same arrangement, and hexagon_nn's 16-bit d32 tensors (Convert_to_d32_16b,
the ``_u16_d32`` ops: op_convert_d32.c, ``tensor_addressing_d32_16b``) are
this arrangement with uint16 elements, 64 bytes per pixel of a slice.

Defaults (§7 and the Convert_to_d32 text): top = bottom = 4, left = 4,
right = the smallest value making ``w_total % 4 == 0`` (from a minimum
right padding, reduced by 4 when it ends above 7), before = 0,
after = ``(-(before + d)) % 32``.
"""
from __future__ import annotations

import numpy as np

#: Channels per depth slice.
LANES = 32
#: ``w_total`` must be a multiple of this (8-bit elements: the positions of one 128-byte vector).
WIDTH_ALIGN = 4


def width_align(dtype: np.dtype) -> int:
    """The width positions one 128-byte HVX vector holds: 4 of 8-bit elements, 2 of 16-bit ones. A 16-bit d32
    tensor's width total is a multiple of 2 (op_convert_d32.c ``convert_to_d32_16b`` with explicit paddings
    makes one of 2 mod 4); the engine's own outputs keep :data:`WIDTH_ALIGN`."""
    return 128 // (LANES * np.dtype(dtype).itemsize)
#: The right padding computed from a minimum is reduced by 4 when above this (op texts).
MAX_RIGHT = 7
#: Element types a d32 tensor may hold.
D32_DTYPES = (np.dtype(np.uint8), np.dtype(np.int16), np.dtype(np.uint16))  # uint16: the u16 _d32 ops

Fill = int | np.random.Generator


def right_padding(left: int, width: int, min_right: int = 0) -> int:
    """Right padding per the op texts: ``min_right`` rounded up so that ``left + width + right``
    is a multiple of 4; reduced by 4 when the result exceeds 7."""
    right = min_right + (-(left + width + min_right)) % WIDTH_ALIGN
    return right - WIDTH_ALIGN if right > MAX_RIGHT else right


def after_padding(before: int, depth: int) -> int:
    """Depth padding after the data: the least making ``before + depth + after`` a multiple of 32."""
    return (-(before + depth)) % LANES


class D32Tensor:
    """A tensor in the padded depth-32 layout (SEMANTICS §7).

    Attributes: ``data`` (the real layout, ``[b, h_total, d_total/32, w_total, 32]``,
    uint8 or int16), ``shape`` (logical ``(b, h, w, d)``), and the paddings
    ``top, bottom, left, right, before, after``. Build one with :func:`to_d32`;
    read the data back with :meth:`logical` / :func:`from_d32`.
    """

    __slots__ = ("_data", "shape", "top", "bottom", "left", "right", "before", "after", "_flat", "_fill", "_dtype")

    def __init__(self, data: np.ndarray, shape: tuple[int, int, int, int], top: int, bottom: int,
                 left: int, right: int, before: int, after: int):
        b, h, w, d = (int(s) for s in shape)
        pads = (top, bottom, left, right, before, after)
        if min(b, h, w, d) < 0 or min(pads) < 0:
            raise ValueError(f"d32 shape {[b, h, w, d]} and paddings {list(pads)} must be >= 0")
        w_total, d_total = left + w + right, before + d + after
        if w_total % width_align(data.dtype) or d_total % LANES:
            raise ValueError(f"d32 width total {w_total} must be a multiple of {width_align(data.dtype)} and depth "
                             f"total {d_total} a multiple of {LANES} (SEMANTICS §7)")
        want = (b, top + h + bottom, d_total // LANES, w_total, LANES)
        if tuple(data.shape) != want:
            raise ValueError(f"d32 data has shape {list(data.shape)}, the layout needs {list(want)}")
        if data.dtype not in D32_DTYPES:
            raise ValueError(f"d32 data has dtype {data.dtype}, expected uint8, int16 or uint16")
        self._data: np.ndarray | None = data
        self._dtype = data.dtype
        self._fill = 0
        self.shape = (b, h, w, d)
        self.top, self.bottom, self.left, self.right, self.before, self.after = (int(p) for p in pads)
        self._flat: np.ndarray | None = None

    @property
    def data(self) -> np.ndarray:
        """The real layout ``[b, h_total, d_total/32, w_total, 32]``.

        A tensor made with ``to_d32(..., lazy=True)`` (every _d32 kernel
        output, issue 11) lays its kept flat data out here on first access:
        the next _d32 op reads the flat data and most layouts are never
        looked at. The bytes are the same either way.
        """
        if self._data is None:
            assert self._flat is not None
            self._data = _layout(self._flat, self.top, self.bottom, self.left, self.right, self.before, self.after,
                                 self._fill)
        return self._data

    @data.setter
    def data(self, value: np.ndarray) -> None:
        self._data = value
        self._dtype = value.dtype

    # --- geometry -----------------------------------------------------------
    @property
    def dtype(self) -> np.dtype:
        """Element type of the data (uint8 for quint8 d32)."""
        return self._dtype

    @property
    def h_total(self) -> int:
        return self.top + self.shape[1] + self.bottom

    @property
    def nd32(self) -> int:
        """Number of 32-channel depth slices, ``d_total / 32``."""
        return (self.before + self.shape[3] + self.after) // LANES

    @property
    def w_total(self) -> int:
        return self.left + self.shape[2] + self.right

    @property
    def d_total(self) -> int:
        return self.nd32 * LANES

    @property
    def padding(self) -> tuple[int, int, int, int, int, int]:
        """``(top, bottom, left, right, before, after)``."""
        return self.top, self.bottom, self.left, self.right, self.before, self.after

    def address(self, b, y, x, c):
        """Flat element address of logical element ``(b, y, x, c)`` (SEMANTICS §7); arrays broadcast."""
        cb = np.asarray(c) + self.before
        row = (np.asarray(b) * self.h_total + np.asarray(y) + self.top) * self.nd32 + cb // LANES
        addr = row * self.w_total * LANES + (np.asarray(x) + self.left) * LANES + cb % LANES
        return int(addr) if np.ndim(addr) == 0 else addr

    # --- data ---------------------------------------------------------------
    def logical(self) -> np.ndarray:
        """The logical ``[b, h, w, d]`` data as a new C-contiguous array (padding never read)."""
        if self._flat is not None:
            return self._flat.copy()
        return self._gather()

    def logical_view(self) -> np.ndarray:
        """The logical data as a read-only array: the flat result this tensor was laid out from when a
        kernel kept it (:meth:`keep_flat`), else a fresh gather. For kernels, which never write inputs."""
        if self._flat is not None:
            return self._flat
        flat = self._gather()
        flat.flags.writeable = False
        return flat

    def keep_flat(self, flat: np.ndarray) -> D32Tensor:
        """Remember ``flat`` (equal to the logical data) so readers need not gather it again; returns ``self``.

        Speed (issue 11): a chain of _d32 ops hands each result on as this
        tensor - the real padded layout - and the flat array it was laid out
        from, kept read-only. The logical data must not be written in place
        afterwards (kernels never do; padding may be, as FillPadding does).
        """
        view = flat.view()
        view.flags.writeable = False
        self._flat = view
        return self

    def _gather(self) -> np.ndarray:
        """The logical data gathered from the padded layout (a new C-contiguous array)."""
        b, h, w, d = self.shape
        isz = self.data.dtype.itemsize
        if self.before == 0 and self.data.strides[-1] == isz:
            # whole 32-lane slices and the partial one as single void elements (see to_d32)
            out = np.empty((b, h, w, d), dtype=self.data.dtype)
            full, rem = divmod(d, LANES)
            rows = slice(self.top, self.top + h)
            cols = slice(self.left, self.left + w)
            if full:
                blk = np.dtype(f"V{LANES * isz}")
                out[..., :full * LANES].view(blk)[...] = \
                    self.data[:, rows, :full, cols, :].view(blk)[..., 0].transpose(0, 1, 3, 2)
            if rem:
                blk = np.dtype(f"V{rem * isz}")
                out[..., full * LANES:].view(blk)[..., 0] = self.data[:, rows, full, cols, :rem].view(blk)[..., 0]
            return out
        core = self.data[:, self.top:self.top + h, :, self.left:self.left + w, :]
        flat = core.transpose(0, 1, 3, 2, 4).reshape(b, h, w, self.d_total)
        return np.ascontiguousarray(flat[..., self.before:self.before + d])

    def padding_masks(self) -> tuple[np.ndarray, np.ndarray]:
        """``(spatial, depth)`` boolean masks broadcastable to ``data``: spatial marks the
        top/bottom/left/right areas (all 32 lanes), depth marks the before/after channels of
        the logical positions only."""
        _, h, w, d = self.shape
        rows = np.ones(self.h_total, bool)
        rows[self.top:self.top + h] = False
        cols = np.ones(self.w_total, bool)
        cols[self.left:self.left + w] = False
        spatial = rows[None, :, None, None, None] | cols[None, None, None, :, None]
        lanes = np.ones(self.d_total, bool)
        lanes[self.before:self.before + d] = False
        depth = lanes.reshape(1, 1, self.nd32, 1, LANES) & ~spatial
        return spatial, depth

    def fill_padding(self, spatial: Fill = 0xFF, depth: Fill | None = None) -> D32Tensor:
        """Overwrite the padding in place and return ``self`` (FillPadding_8_d32's test aid).

        ``spatial`` fills the top/bottom/left/right areas, ``depth`` (default:
        the same as ``spatial``) the before/after channels; each is an
        element value or a ``numpy.random.Generator`` for random values.
        """
        depth = spatial if depth is None else depth
        for mask, fill in zip(self.padding_masks(), (spatial, depth)):
            full = np.broadcast_to(mask, self.data.shape)
            self.data[full] = self._values(fill, int(full.sum()))
        return self

    def _values(self, fill: Fill, n: int) -> np.ndarray | int:
        info = np.iinfo(self.dtype)
        if isinstance(fill, np.random.Generator):
            return fill.integers(info.min, info.max, size=n, endpoint=True, dtype=self.dtype)
        if not info.min <= int(fill) <= info.max:
            raise ValueError(f"fill value {fill} is outside the {self.dtype} range")
        return int(fill)

    def copy(self) -> D32Tensor:
        """A deep copy (own data array; a kept flat array, read-only, is shared)."""
        out = D32Tensor(self.data.copy(), self.shape, *self.padding)
        out._flat, out._fill = self._flat, self._fill
        return out

    def __repr__(self) -> str:
        t, bo, le, ri, be, af = self.padding
        return (f"D32Tensor(shape={list(self.shape)}, dtype={self.dtype}, pad top/bottom={t}/{bo} "
                f"left/right={le}/{ri} before/after={be}/{af})")


def to_d32(arr4: np.ndarray, top: int = 4, bottom: int = 4, left: int = 4, right: int | None = None,
           before: int = 0, after: int | None = None, fill: int = 0, lazy: bool = False) -> D32Tensor:
    """Lay a flat ``[b, h, w, d]`` array out as d32 (SEMANTICS §7 defaults); padding holds ``fill``.

    ``right=None`` picks the least right padding making the width total a
    multiple of 4; ``after=None`` the least depth padding making the depth
    total a multiple of 32. Explicit values must satisfy those rules.
    ``lazy=True`` keeps ``arr4`` (read-only, as :meth:`D32Tensor.keep_flat`)
    and lays it out only when :attr:`D32Tensor.data` is first read.
    """
    a = np.asarray(arr4)
    if a.ndim != 4:
        raise ValueError(f"to_d32 needs a 4-D [b,h,w,d] array, got shape {list(a.shape)}")
    b, h, w, d = a.shape
    right = right_padding(left, w) if right is None else right
    after = after_padding(before, d) if after is None else after
    d_total = before + d + after
    w_total = left + w + right
    align = width_align(a.dtype) if a.dtype in D32_DTYPES else WIDTH_ALIGN
    if min(top, bottom, left, right, before, after) < 0 or w_total % align or d_total % LANES:
        raise ValueError(f"paddings top/bottom {top}/{bottom} left/right {left}/{right} before/after "
                         f"{before}/{after} do not give a valid d32 layout for shape {list(a.shape)}: paddings "
                         f"must be >= 0, the width total ({w_total}) a multiple of {align} and the depth "
                         f"total ({d_total}) a multiple of {LANES} (SEMANTICS §7)")
    if a.dtype not in D32_DTYPES:
        raise ValueError(f"d32 data has dtype {a.dtype}, expected uint8, int16 or uint16")
    # the layout was checked above: skip the constructor's checks (this runs for every _d32 output)
    t = D32Tensor.__new__(D32Tensor)
    t.shape, t._flat, t._fill, t._dtype = (int(b), int(h), int(w), int(d)), None, int(fill), a.dtype
    t.top, t.bottom, t.left, t.right, t.before, t.after = (int(top), int(bottom), int(left), int(right),
                                                          int(before), int(after))
    if lazy:
        t._data = None
        return t.keep_flat(a)
    t._data = _layout(a, top, bottom, left, right, before, after, fill)
    return t


def _layout(a: np.ndarray, top: int, bottom: int, left: int, right: int, before: int, after: int,
            fill: int) -> np.ndarray:
    """The padded ``[b, h_total, d_total/32, w_total, 32]`` bytes of flat ``a`` (paddings already checked)."""
    b, h, w, d = a.shape
    d_total, w_total = before + d + after, left + w + right
    shape = (b, top + h + bottom, d_total // LANES, w_total, LANES)
    # the padding value everywhere first (np.zeros for the usual 0 is the cheapest), then the logical
    # data in one strided copy; with before = 0 the flat data needs no deep intermediate
    data = np.zeros(shape, dtype=a.dtype) if fill == 0 else np.full(shape, fill, dtype=a.dtype)
    if before == 0:
        # whole slices move as single 32-lane void elements and the partial slice as one rem-lane
        # element: numpy then copies one block per pixel instead of one byte per lane (~10x faster)
        full, rem = divmod(d, LANES)
        isz = a.dtype.itemsize
        if a.ndim and a.strides[-1] != isz:
            a = np.ascontiguousarray(a)
        if full:
            blk = np.dtype(f"V{LANES * isz}")
            dst = data[:, top:top + h, :full, left:left + w, :].view(blk)[..., 0]      # [b, h, full, w]
            dst[...] = a[..., :full * LANES].view(blk).transpose(0, 1, 3, 2)
        if rem:
            blk = np.dtype(f"V{rem * isz}")
            dst = data[:, top:top + h, full, left:left + w, :rem].view(blk)[..., 0]   # [b, h, w]
            dst[...] = a[..., full * LANES:].view(blk)[..., 0]
    else:
        inner = data[:, top:top + h, :, left:left + w, :].transpose(0, 1, 3, 2, 4)   # [b, h, w, nd32, 32]
        deep = np.full((b, h, w, d_total), fill, dtype=a.dtype)
        deep[..., before:before + d] = a
        inner[...] = deep.reshape(b, h, w, d_total // LANES, LANES)
    return data


def from_d32(t: D32Tensor) -> np.ndarray:
    """The flat ``[b, h, w, d]`` array of a d32 tensor (its logical data)."""
    return t.logical()
