"""Per-node caches of constants a kernel derives from its inputs (engine speed, issue 11).

A kernel's ``ctx.state`` persists across executions of the same node
(:class:`~hexnn_import.ops.registry.KernelContext`), so anything a kernel
derives from inputs that do not change between runs - centred weight
matrices, bias terms, reciprocal and shift tables, lookup tables - can be
computed on the first run and served from there afterwards.

An entry is served only while its *key* is unchanged:

- ``refs``: the input arrays it was derived from, compared by identity
  (``is``). The entry holds them, so an id can never be reused by another
  array while the entry lives; a Const replaced by a new array (or any
  input computed afresh on each run) is a miss and the entry is rebuilt.
- ``values``: a tuple of plain Python values (range ends, shapes),
  compared with ``==``.

Within one :class:`~hexnn_import.engine.Engine` Const data never changes in
place, so identity is a sound key for them. Whatever ``build`` validates is
validated again on every miss, so a cached node raises the same errors as an
uncached one on the same inputs (the checks a hit skips are pure functions of
the key).

:class:`Replay` goes one step further for the hot kernels (supernodes,
depthwise, channel scale, bias add, requantize, add, average pool): after a
run it keeps a function of the data inputs alone, used while every other
input is unchanged. The range outputs such a node hands out are then the
same read-only arrays on every run (the engine copies read-only arrays
before handing them to users).
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

import numpy as np

from hexnn_import.ops import table_store

T = TypeVar("T")
_MISSING = object()

#: Prefix of the ``ctx.state`` keys used by caches (kept apart from the op state, e.g. auto ranges).
PREFIX = "_cache."
#: suffix of the state key holding the bytes a memo keeps (counted against the budget, ops/table_store.py)
_BYTES = ".bytes"


def node_cached(state: dict[str, Any], name: str, refs: Sequence[Any], values: tuple, build: Callable[[], T]) -> T:
    """``build()``, computed once per key and kept in ``state`` (a kernel's ``ctx.state``) under ``name``."""
    slot = PREFIX + name
    ids = tuple(map(id, refs))
    entry = state.get(slot)
    # equal ids are the same objects: the entry holds its refs alive, so their ids are not reused
    if entry is not None and entry[1] == ids and entry[2] == values:
        return entry[3]
    result = build()
    size = table_store.nbytes_of(result)
    table_store.current().account(size, entry[4] if entry is not None else 0, f"cache '{name}'")
    state[slot] = (tuple(refs), ids, values, result, size)
    return result


def node_memo(state: dict[str, Any], name: str, key: Hashable, build: Callable[[], T], max_entries: int = 8) -> T:
    """``build()`` memoised by a hashable ``key`` of plain values in ``state`` under ``name``.

    For constants that depend only on values (range ends, op names): an auto
    range visits a few ranges, and each keeps its entry; past ``max_entries``
    the memo starts afresh. Inside an engine the memo is its store's, shared by
    every node whose ``name``, ``build`` code and ``key`` agree (identical nodes:
    issue 38, a 100,000-ADD chain kept 100,000 copies of two scalings);
    ``build`` must then be a function of ``key`` alone, as it is here.
    """
    store = table_store.current()
    if store.counts_nodes:
        return store.memo((name, getattr(build, "__code__", build), key), build, f"cache '{name}'")
    slot = PREFIX + name
    memo = state.get(slot)
    if memo is None:
        memo = state[slot] = {}
    got = memo.get(key, _MISSING)
    if got is _MISSING:
        store = table_store.current()
        if len(memo) >= max_entries:
            store.account(0, state.get(slot + _BYTES, 0), f"cache '{name}'")
            memo.clear()
            state[slot + _BYTES] = 0
        got = build()
        size = table_store.nbytes_of(got)
        store.account(size, 0, f"cache '{name}'")
        memo[key] = got
        state[slot + _BYTES] = state.get(slot + _BYTES, 0) + size
    return got


class Replay:
    """A kernel's last run reduced to its data part, kept in the node state (issue 11).

    Kernels spend much of a small node's time reading and checking inputs
    that never change between runs (Consts, ranges) and deriving the same
    constants again. A kernel may store, after a run that succeeded, a
    function of its *data* inputs alone that gives the very same outputs
    (:func:`replay_store`); the next run takes it (:func:`replay_get`) only
    when every other input is unchanged: the very same objects as last time
    (held alive, so an id is never reused), or else arrays holding one
    element (range ends) equal in shape, dtype and bytes and the other arrays
    the same objects; and the data inputs have the same shapes and dtypes. Everything the skipped checks looked at is then the same, so
    they would pass again; the data itself is read by the function as in the
    full path.
    """

    __slots__ = (
        "all_held",
        "all_ids",
        "data",
        "fn",
        "forms",
        "held",
        "id_pos",
        "ids",
        "n",
        "others",
        "val_pos",
        "values",
    )

    def __init__(self, inputs: Sequence[Any], data: tuple[int, ...], fn: Callable[..., Any]):
        self.n = len(inputs)
        self.data = data
        self.id_pos = tuple(i for i, a in enumerate(inputs) if i not in data and not _is_scalar(a))
        self.val_pos = tuple(i for i, a in enumerate(inputs) if i not in data and _is_scalar(a))
        self.held = tuple(inputs[i] for i in self.id_pos)
        self.ids = tuple(map(id, self.held))
        self.values = _scalar_key(inputs, self.val_pos)
        self.forms = _data_forms(inputs, data)
        self.fn = fn
        # every non-data input by identity: the common case, where each is the very same object as last
        # time (Consts; range outputs of replayed nodes, which are the same read-only arrays every run)
        self.others = tuple(i for i in range(self.n) if i not in data)
        self.all_held = tuple(inputs[i] for i in self.others)
        self.all_ids = tuple(map(id, self.all_held))

    def matches(self, inputs: Sequence[Any]) -> bool:
        """True when this replay gives the outputs of a full run on ``inputs``."""
        if len(inputs) != self.n or _data_forms(inputs, self.data) != self.forms:
            return False
        if tuple(id(inputs[i]) for i in self.others) == self.all_ids:
            return True
        return (tuple(id(inputs[i]) for i in self.id_pos) == self.ids
                and _scalar_key(inputs, self.val_pos) == self.values)

    def rebind(self, inputs: Sequence[Any]) -> None:
        """After :meth:`matches` held for ``inputs``: take their non-data objects as the ones to match by
        identity from now on (held alive here, so their ids cannot be reused meanwhile). The replay gives
        the outputs of a full run on them, as it did on those it was built from; when a node before this one
        hands out the same range arrays again on the next run (:func:`~hexnn_import.ops.kernel_io.
        kept_range_out`), the identity check then suffices (speed, issue 37)."""
        self.all_held = tuple(inputs[i] for i in self.others)
        self.all_ids = tuple(map(id, self.all_held))


def _is_scalar(a: Any) -> bool:
    return type(a) is np.ndarray and a.size == 1


def _scalar_key(inputs: Sequence[Any], pos: tuple[int, ...]) -> tuple | None:
    out = []
    for i in pos:
        a = inputs[i]
        if type(a) is not np.ndarray or a.size != 1:
            return None
        out.append((a.shape, a.dtype.char, a.tobytes()))
    return tuple(out)


def _data_forms(inputs: Sequence[Any], pos: tuple[int, ...]) -> tuple | None:
    out = []
    for i in pos:
        a = inputs[i]
        if type(a) is not np.ndarray:
            return None
        out.append((a.shape, a.dtype.char))
    return tuple(out)


def replay_get(state: dict[str, Any], inputs: Sequence[Any]) -> Callable[..., Any] | None:
    """The stored replay function when it applies to ``inputs`` (see :class:`Replay`), else None."""
    r = state.get(PREFIX + "replay")
    return r.fn if r is not None and r.matches(inputs) else None


def replay_store(state: dict[str, Any], inputs: Sequence[Any], data: tuple[int, ...], fn: Callable[..., Any]) -> None:
    """Keep ``fn`` (data inputs -> the outputs) for runs whose other inputs equal these ``inputs``."""
    if _scalar_key(inputs, tuple(i for i, a in enumerate(inputs) if i not in data and _is_scalar(a))) is None \
            or _data_forms(inputs, data) is None:
        return
    state[PREFIX + "replay"] = Replay(inputs, data, fn)
