"""What kernels keep between runs, counted against the memory budget and shared where the arithmetic allows.

Issue 38 ([Robust], finding 1): each QuantizedAdd_8p8to8 kept its own 256x256 tables (op_add.c's
``addsub_scaling`` tables, ~192 KiB a node), outside the memory budget: 10,000 ADDs used 2.37 GB under
``--max-memory 64M``. Now

- every table, cache entry or replay a kernel keeps (:mod:`hexnn_import.ops.node_cache`) is counted
  against the budget (:mod:`hexnn_import.memory`) together with the run's activation plan, and a kernel
  asks before it builds a table of known size (:meth:`TableStore.shared`): over the budget it is a
  :class:`~hexnn_import.errors.ResourceError` naming the node, before the bytes are allocated;
- a table that is a pure function of plain values (the add's tables depend only on the
  :class:`~hexnn_import.ops.nnlib_addsub.Scaling`, itself a function of the ranges) is built once per
  engine and shared by every node with the same key; so are the kernels' memos of plain values
  (:func:`hexnn_import.ops.node_cache.node_memo`: a scaling, a dequantize table), which identical nodes
  (same ranges, same parameters) share instead of keeping one each.

The engine makes one store per graph, with the budget's check (``ops/`` imports nothing above it), and
makes it current while it runs (:func:`active`); kernels called outside an engine use a process-wide store
that keeps a few shared tables and checks nothing.
"""
from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Hashable, Iterator
from typing import Any, TypeVar

import numpy as np

from hexnn_import.errors import ResourceError

T = TypeVar("T")

#: bytes counted for any Python object kept beside the arrays of a cache entry (its key, a closure)
ENTRY_OVERHEAD = 256
#: memos an engine's store keeps before it starts afresh (:meth:`TableStore.memo`)
MAX_MEMOS = 1 << 14


def nbytes_of(obj: Any, depth: int = 3) -> int:
    """The bytes of the numpy arrays ``obj`` holds (in tuples, lists, dicts, a few levels deep), plus
    :data:`ENTRY_OVERHEAD` per container."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if depth <= 0:
        return ENTRY_OVERHEAD
    if isinstance(obj, dict):
        return ENTRY_OVERHEAD + sum(nbytes_of(v, depth - 1) for v in obj.values())
    if isinstance(obj, (tuple, list)):
        return ENTRY_OVERHEAD + sum(nbytes_of(v, depth - 1) for v in obj)
    return ENTRY_OVERHEAD


def _kib(nbytes: int) -> str:
    return f"{nbytes / 1024:.1f} KiB"


class TableBudgetError(ResourceError):
    """A kernel's kept tables would pass the budget; the engine prefixes the node that asked."""


class TableStore:
    """The kept bytes of one engine: shared tables by key, and the total of per-node cache entries."""

    def __init__(self, check: Callable[[int, str], None] | None = None, max_shared: int | None = None,
                 counts_nodes: bool = True) -> None:
        self.check = check  # the budget check (hexnn_import.memory.check_bytes: ops/ sits below it), or None
        self.max_shared = max_shared  # the process-wide store starts afresh past this many tables
        self.counts_nodes = counts_nodes  # False where no engine owns (and drops) the node states
        self.shared_tables: dict[Hashable, tuple[Any, int]] = {}
        self.shared_bytes = 0
        #: the memos of :func:`hexnn_import.ops.node_cache.node_memo` shared by identical nodes (by name, code,
        #: key), and their bytes (counted with the node caches)
        self.memos: dict[Hashable, tuple[Any, int]] = {}
        self.memo_bytes = 0
        self.node_bytes = 0
        self.baseline = 0  # the activation plan's peak, set by the engine before the first run

    @property
    def total(self) -> int:
        """Bytes counted now: activation plan, shared tables and per-node entries."""
        return self.baseline + self.shared_bytes + self.node_bytes

    def reserve(self, nbytes: int, what: str) -> None:
        """TableBudgetError when ``nbytes`` more would bring the total above the budget (``what``: the table)."""
        if self.check is None:
            return
        try:
            self.check(self.total + nbytes, f"{what}: {_kib(nbytes)} more kept between runs (activations "
                       f"{_kib(self.baseline)}, tables {_kib(self.shared_bytes)}, node caches {_kib(self.node_bytes)})")
        except ResourceError as exc:
            raise TableBudgetError(str(exc)) from None

    def shared(self, key: Hashable, nbytes: int, build: Callable[[], T], what: str) -> T:
        """``build()`` once per ``key`` for every node of the engine; ``nbytes`` (its size) checked first."""
        got = self.shared_tables.get(key)
        if got is not None:
            return got[0]
        if self.max_shared is not None and len(self.shared_tables) >= self.max_shared:
            self.shared_tables.clear()
            self.shared_bytes = 0
        self.reserve(nbytes, what)
        value = build()
        size = nbytes_of(value)
        self.shared_tables[key] = (value, size)
        self.shared_bytes += size
        return value

    def memo(self, key: Hashable, build: Callable[[], T], what: str) -> T:
        """``build()`` once per ``key`` for every node of the engine (a pure function of the key: the memos of
        identical nodes), its bytes counted as a node cache's; past :data:`MAX_MEMOS` keys (a key that never
        equals itself, as one holding a NaN, is never found again) the memos start afresh."""
        got = self.memos.get(key)
        if got is not None:
            return got[0]
        if len(self.memos) >= MAX_MEMOS:
            self.account(0, self.memo_bytes, what)
            self.memos.clear()
            self.memo_bytes = 0
        value = build()
        size = nbytes_of(value)
        self.account(size, 0, what)
        self.memos[key] = (value, size)
        self.memo_bytes += size
        return value

    def account(self, added: int, freed: int, what: str) -> None:
        """A per-node entry of ``added`` bytes replacing ``freed`` bytes; refused over the budget."""
        if not self.counts_nodes:
            return
        if added > freed:
            self.reserve(added - freed, what)
        self.node_bytes = max(0, self.node_bytes + added - freed)

    def drop_nodes(self) -> None:
        """The engine's node states were dropped (a reset): their entries no longer count. The shared tables
        and memos stay: pure functions of their keys, a new engine would build the very same ones."""
        self.node_bytes = self.memo_bytes if self.counts_nodes else 0

    def clear(self) -> None:
        """Forget every table and entry (the engine's node states were dropped)."""
        self.shared_tables.clear()
        self.memos.clear()
        self.shared_bytes = self.node_bytes = self.memo_bytes = 0


#: kernels run outside an engine (tests, tools): a few shared tables kept, node states not counted
_PROCESS = TableStore(None, max_shared=64, counts_nodes=False)
_CURRENT: contextvars.ContextVar[TableStore] = contextvars.ContextVar("hexnn_table_store", default=_PROCESS)


def current() -> TableStore:
    """The store of the engine running now (or the process-wide one)."""
    return _CURRENT.get()


@contextlib.contextmanager
def active(store: TableStore) -> Iterator[TableStore]:
    """Make ``store`` current for the kernels run inside the block."""
    token = _CURRENT.set(store)
    try:
        yield store
    finally:
        _CURRENT.reset(token)
