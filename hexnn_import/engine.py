"""The Hexagon-semantics engine: runs a Graph on numpy inputs with the ops/ kernels.

Execution follows hexagon_nn (hexagon_nn_prepare_notes.txt, "The 'prepare'
process"): nodes run in list order; Const nodes hold their data; the INPUT
node hands out the fed tensors; the OUTPUT node's inputs are the results.
Per-node state (the auto-range widening of SEMANTICS §5) lives in the
:class:`Engine` and persists across :meth:`Engine.run` calls, as it does on
the device between executions of one prepared graph.

Speed (issue 11): what does not change between runs - each node's kernel
context, its input and output refs, the refs it frees - is planned on the
first run; kernels keep constants derived from their Const inputs in their
node state (:mod:`hexnn_import.ops.node_cache`); BLAS runs single-threaded
by default (:func:`blas_limit`). ``bench/engine_speed.py`` measures it.
"""
from __future__ import annotations

import contextlib
import math
import operator
import os
from typing import Any, Sequence

import numpy as np

from hexnn_import.errors import InputDataError, ResourceError
from hexnn_import.graph import ELEMENT_DTYPES, Graph, Node, Ref
from hexnn_import.memory import check_bytes
from hexnn_import.ops import compiled, table_store
from hexnn_import.table_plan import check_run_state, check_table_plan
from hexnn_import.ops.d32 import D32Tensor
from hexnn_import.ops.kernels.graph_variable import prepare_variables, read_value, write_value
from hexnn_import.ops.kernels.supernode_flat_device import for_graph
from hexnn_import.ops.registry import Kernel, KernelContext, get_kernel
from hexnn_import.ops.replay_lane import lane_for
from hexnn_import.ops.op_groups import WORK_OPS

#: BLAS threads used during a run (environment variable; "0" leaves the BLAS library's own setting).
BLAS_THREADS_ENV = "HEXNN_BLAS_THREADS"


def blas_limit() -> Any:
    """A context manager holding the BLAS library to ``$HEXNN_BLAS_THREADS`` threads (default 1) for a run.

    The engine's products are many small matrix multiplies; a multi-threaded
    BLAS gains little on them and loses badly when the cores are busy
    (measured on the 2-core development machine, MobileNetV2-style 224x224
    while other processes ran: ~20 ms per run with one BLAS thread, 80-350 ms
    with OpenBLAS's default two). Results do not depend on it (every product
    is exact). Through threadpoolctl (a declared dependency; should it fail
    to load, BLAS keeps its own setting), as when the variable is 0. The
    compiled loops (:mod:`hexnn_import.ops.compiled`) read the same variable.
    """
    global _CONTROLLER
    try:
        n = int(os.environ.get(BLAS_THREADS_ENV, "1"))
    except ValueError:
        n = 1
    want = max(n, 1)   # the compiled paths' threads for this run, read once (compiled.run_settings)
    compiled.use_threads(want)
    if n <= 0:   # BLAS and the compiled paths as they are: the environment is read at each use
        return contextlib.nullcontext()
    if compiled.available():
        # the compiled loops and onnxruntime take the threads; BLAS (left with the small products) keeps
        # one: two OpenBLAS threads spin-waiting beside numba's OpenMP ones made a 2-thread run of the
        # full MobileNetV2 64-112 ms against 22-27 ms (2-core development machine, otherwise idle)
        n = 1
    if _CONTROLLER is None:
        try:
            from threadpoolctl import ThreadpoolController
            _CONTROLLER = [lc for lc in ThreadpoolController().lib_controllers if lc.user_api == "blas"]
        except Exception:  # noqa: BLE001 - optional: any failure to load it means "leave BLAS alone"
            _CONTROLLER = False
    if not _CONTROLLER:
        return compiled.run_settings(want)
    return _BlasThreads(_CONTROLLER, n, compiled.run_settings(want))


class _BlasThreads:
    """threadpoolctl's ``limit(limits=n, user_api="blas")`` on the BLAS libraries found once (speed, issue 37:
    the controller's own ``limit`` inspects every loaded library again, ~15 us a run): each set to ``n``
    threads inside the block and given back its own count after it; ``inner`` (the compiled paths' settings of
    the run, :func:`hexnn_import.ops.compiled.run_settings`) is entered around it."""

    __slots__ = ("inner", "libs", "n", "saved")

    def __init__(self, libs: list[Any], n: int, inner: Any):
        self.libs, self.n, self.saved, self.inner = libs, n, [], inner

    def __enter__(self) -> None:
        self.inner.__enter__()
        self.saved = [(lc, had) for lc in self.libs if (had := lc.num_threads) != self.n]
        for lc, _ in self.saved:
            lc.set_num_threads(self.n)

    def __exit__(self, *exc: Any) -> None:
        for lc, had in self.saved:
            lc.set_num_threads(had)
        self.inner.__exit__(*exc)


_CONTROLLER: Any = None
_DATA = operator.attrgetter("data")


class Engine:
    """Runs one graph; create once, call :meth:`run` many times (the graph must not change meanwhile)."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.state: dict[int, dict[str, Any]] = {}
        self._kernels: dict[int, Kernel] = {}
        # position of the last node reading each ref, so tensors can be dropped once read
        self._last_use: dict[Ref, int] = {}
        for pos, node in enumerate(graph.nodes):
            for r in node.inputs:
                self._last_use[r] = pos
            if not node.is_const and node.op not in ("INPUT", "OUTPUT"):
                # a kernel that replays gets the short way to its replay (ops/replay_lane.py; speed, issue 37)
                # a flat 8-bit supernode follows its own device code only in a graph marked prepared
                self._kernels[node.node_id] = lane_for(for_graph(get_kernel(node.op, node.label), graph.prepared))
        # Variables take their initial values at preparation; Assign targets are checked
        prepare_variables(graph.nodes, self.state)
        self._steps: list[tuple] | None = None  # the run plan, built on the first run
        self._slots: dict[Ref, int] = {}   # the run plan's slot of every tensor (see _plan)
        self._const_nodes: list[Node] = []
        self._blank: list[None] = []
        self._checked: set[bool] = set()  # mark_all values whose activation plan fits the memory budget
        self.tables = table_store.TableStore(check_bytes)  # what the kernels keep between runs, within the budget too

    def _plan(self) -> list[tuple]:
        """Everything :meth:`run` needs per node that does not change between runs (speed, issues 11 and 37).

        Every tensor a run holds has a slot in one list, numbered once here (``self._slots``): the Consts
        first (``self._const_nodes``, their data read on every run in one C-level pass), then each node's
        outputs; a run fills a fresh list and the steps read and write it by index, so no ref is hashed
        while the graph runs. One step per node but Consts: ``("input", node, slots)``, ``("output",
        slots)`` or ``("kernel", node_id, ctx, input gatherer, output slots, output refs, slots to
        free)``. The :class:`KernelContext` of a node is built once and reused; its ``state`` and its
        kernel (``self._kernels``) are looked up on every run, so a replaced state dict or kernel is seen.
        A slot is emptied after its last reader, unless a Const holds it. A ref no node produces is a
        KeyError, here as it was in a run.
        """
        steps: list[tuple] = []
        consts = [node for node in self.graph.nodes if node.is_const]
        slots: dict[Ref, int] = {Ref(node.node_id, 0): i for i, node in enumerate(consts)}
        for node in self.graph.nodes:
            if not node.is_const and node.op != "OUTPUT":
                for i in range(len(node.output_defs)):
                    slots[Ref(node.node_id, i)] = len(slots)
        for pos, node in enumerate(self.graph.nodes):
            if node.is_const:
                continue
            if node.op == "INPUT":
                steps.append(("input", node, [slots[Ref(node.node_id, i)] for i in range(len(node.output_defs))]))
            elif node.op == "OUTPUT":
                steps.append(("output", [slots[r] for r in node.inputs]))
            else:
                ctx = KernelContext(node=node.label, op=node.op, padding=int(node.padding),
                                    state=self.state.setdefault(node.node_id, {}), n_outputs=len(node.output_defs),
                                    out_shapes=tuple(tuple(od.shape) for od in node.output_defs))
                free = [slots[r] for r in node.inputs
                        if self._last_use.get(r) == pos and not self.graph.node(r.src_id).is_const]
                ins = [slots[r] for r in node.inputs]
                # one C call gathers the inputs (itemgetter of one key returns the value itself)
                gather = operator.itemgetter(*ins) if len(ins) > 1 else (
                    (lambda v, _r=ins[0]: (v[_r],)) if ins else (lambda v: ()))
                refs = [Ref(node.node_id, i) for i in range(len(node.output_defs))]
                steps.append(("kernel", node.node_id, ctx, gather, [slots[r] for r in refs], refs, free))
        self._slots = slots
        self._const_nodes = consts
        self._blank = [None] * (len(slots) - len(consts))
        return steps

    def read_variable(self, node_id: int, output_idx: int = 0) -> np.ndarray:
        """Host-side variable_read (op text of Variable): a copy of a Variable output's current value."""
        return read_value(self.graph.node(node_id), self.state, output_idx)

    def write_variable(self, node_id: int, array: np.ndarray, output_idx: int = 0) -> None:
        """Host-side variable_write (op text of Variable): replace a Variable output's value between runs."""
        write_value(self.graph.node(node_id), self.state, array, output_idx)

    def reset_state(self) -> None:
        """Forget what earlier runs left in the nodes' state: Variables (a TFLite resource variable, a fused
        LSTM's state) back to their initial values, every other node's kept state (a supernode's output
        range) dropped, as in a newly created engine."""
        self.state.clear()
        self.tables.drop_nodes()  # the shared tables stay (the same a new engine would build; memory, issue 38)
        prepare_variables(self.graph.nodes, self.state)

    def run(self, feeds: Sequence[np.ndarray], mark_all: bool = False
            ) -> tuple[list[np.ndarray], dict[Ref, np.ndarray]]:
        """Execute the graph.

        ``feeds`` are the INPUT node's outputs in order, already in graph
        element types (quint8 as uint8, float as float32). Returns the OUTPUT
        node's inputs in order, and with ``mark_all`` every node output by
        ref (``{}`` otherwise).
        """
        if self._steps is None:
            self._steps = self._plan()
        self.check_memory(mark_all)
        # Const nodes hold their data (read on every run, in one C-level pass), in the plan's first slots
        values: list[Any] = list(map(_DATA, self._const_nodes))
        values.extend(self._blank)
        keep_all: dict[Ref, np.ndarray] = {}
        outs: list[np.ndarray] = []
        state, kernels = self.state, self._kernels
        with blas_limit(), table_store.active(self.tables):
            ctx = None
            try:
                for step in self._steps:
                    kind = step[0]
                    if kind == "kernel":
                        _, node_id, ctx, gather, out_slots, out_refs, free = step
                        ctx.state = state.setdefault(node_id, {})
                        results = kernels[node_id](ctx, gather(values))
                        for i, arr in zip(out_slots, results):
                            values[i] = arr
                        if mark_all:
                            keep_all.update(zip(out_refs, map(flat_value, results)))
                        # free tensors no later node reads (buffer reuse by the garbage collector)
                        for i in free:
                            values[i] = None
                    elif kind == "input":
                        self._feed(step[1], feeds, values, step[2])
                    else:
                        outs = [flat_value(values[r]) for r in step[1]]
            except table_store.TableBudgetError as exc:  # a kept table above the budget: name the node
                raise ResourceError(f"node {ctx.node} ({ctx.op}): {exc}" if ctx else str(exc)) from None
        compiled.warm()
        return outs, keep_all

    def check_memory(self, mark_all: bool = False) -> None:
        """ResourceError when the tensors a run holds (:func:`activation_bytes`; all of them with ``mark_all``)
        exceed the memory budget (:mod:`hexnn_import.memory`); checked once per graph, before the first run."""
        if mark_all in self._checked:
            return
        peak, every, largest = activation_bytes(self.graph, self._last_use)
        activations = every if mark_all else peak
        check_bytes(activations, f"the run's activations ({len(self.graph.nodes)} nodes"
                    + (", every tensor kept" if mark_all else "") + f"; largest: {largest})")
        tables = check_table_plan(self.graph, activations)  # the tables known before the run, too
        kept = check_run_state(self.graph, activations, tables)  # and the graph and what each node keeps
        # counted from now on with the tables and caches the kernels build (ops/table_store.py)
        self.tables.baseline = max(self.tables.baseline, activations + kept)
        self._checked.add(mark_all)

    def _feed(self, node: Node, feeds: Sequence[np.ndarray], values: Any, slots: Sequence[int] | None = None) -> None:
        """The fed tensors into ``values``: at the plan's ``slots`` (a run's list), else by ref (a dict)."""
        self.check_memory()  # engines that run their own loop (xs3/run.py) feed through here too
        if len(feeds) != len(node.output_defs):
            raise InputDataError(f"graph takes {len(node.output_defs)} inputs, got {len(feeds)}")
        for i, (arr, od) in enumerate(zip(feeds, node.output_defs)):
            want = ELEMENT_DTYPES.get(od.dtype)
            a = np.asarray(arr)
            if want is not None and a.dtype != want:
                raise InputDataError(f"input {i} has dtype {a.dtype}, the graph takes {od.dtype}")
            if math.prod(a.shape) != math.prod(int(d) for d in od.shape):
                raise InputDataError(f"input {i} has shape {a.shape}, the graph takes {list(od.shape)}")
            values[Ref(node.node_id, i) if slots is None else slots[i]] = a.reshape(od.shape)


#: the working arrays per output element while a product node runs (the ops of
#: :data:`hexnn_import.ops.op_groups.WORK_OPS`): exact sums and pre-saturation codes are float64 /
#: int64 arrays of the output's size (ops/conv_core.py conv_sum_at, ops/output_stage/codes.py presat), two at a time
WORK_BYTES_PER_ELEMENT = 16


def activation_bytes(graph: Graph, last_use: dict[Ref, int] | None = None) -> tuple[int, int, str]:
    """(peak, total, largest): the bytes of node outputs a run holds at once, of all of them (a "mark all"
    run), and the largest output as ``"node NAME (OP) [shape]"``.

    From the declared ``output_defs`` (shape x element size, SEMANTICS §7's d32
    padding aside; while a convolution or product node runs, its kernel's
    working arrays, :data:`WORK_BYTES_PER_ELEMENT` per output element, count towards the peak) and the run's freeing rule (:meth:`Engine._plan`: a tensor
    is dropped after its last reader, Const data is held throughout and not
    counted). Python integers: a corrupt shape gives a huge number, not an
    overflow.
    """
    if last_use is None:
        last_use = {}
        for pos, node in enumerate(graph.nodes):
            for r in node.inputs:
                last_use[r] = pos
    live = peak = total = big = 0
    largest = "none"
    size: dict[Ref, int] = {}
    for pos, node in enumerate(graph.nodes):
        if node.is_const:
            continue
        work = 0
        for i, od in enumerate(node.output_defs):
            dt = ELEMENT_DTYPES.get(od.dtype)
            count = math.prod(max(int(d), 0) for d in od.shape)
            n = count * (dt.itemsize if dt is not None else 4)
            if node.op in WORK_OPS:
                work = max(work, count * WORK_BYTES_PER_ELEMENT)
            size[Ref(node.node_id, i)] = n
            live += n
            total += n
            if n > big:
                big, largest = n, f"node {node.label} ({node.op}) {list(od.shape)}"
        peak = max(peak, live + work)
        for r in node.inputs:
            if last_use.get(r) == pos and r in size:
                live -= size.pop(r)
    return peak, total, largest


def flat_value(value: Any) -> Any:
    """A d32 tensor (SEMANTICS §7) as its logical flat array; anything else unchanged, except that a
    read-only array (kernels may hand on read-only views, see ``D32Tensor.keep_flat``) is copied.

    Between nodes d32 tensors travel as :class:`D32Tensor` objects (the real
    padded layout); graph outputs and "mark all" tensors are handed out flat
    and writable.
    """
    if isinstance(value, D32Tensor):
        return value.logical()
    if isinstance(value, np.ndarray) and not value.flags.writeable:
        return value.copy()
    return value
