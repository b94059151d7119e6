"""Per-node tables count against the memory budget and are shared between nodes with the same ranges (issue 38,
finding 1: each QuantizedAdd kept its own 256x256 tables outside the budget, 10,000 ADDs took 2.37 GB under
``--max-memory 64M``). The hostile chains come from :mod:`hexnn_import.testing.hostile_chains`; the 10,000-ADD
replay with its peak memory is ``bench/table_budget.py``."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from hexnn_import import memory
from hexnn_import.api import import_model, prepare
from hexnn_import.errors import ResourceError
from hexnn_import.runner import Runner
from hexnn_import.table_plan import planned_tables
from hexnn_import.testing.hostile_chains import add_chain_tflite
from hexnn_import.testing.tflite_compare import assert_agrees

TABLES = 3 * 256 * 256  # one scaling's uint8 codes + int16 intermediates (op_add.c's addsub tables)
BUDGET = 16 << 20


@pytest.fixture
def budget() -> Iterator[int]:
    memory.set_budget(BUDGET)
    try:
        yield BUDGET
    finally:
        memory.set_budget(None)


def _runner(tmp_path: Path, model: bytes) -> Runner:
    path = tmp_path / "chain.tflite"
    path.write_bytes(model)
    return Runner(prepare(import_model(path)))


def _feed() -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(0).integers(0, 256, (1, 4, 4, 8), dtype=np.uint8)}


def test_distinct_tables_past_the_budget_are_refused_before_the_run(tmp_path: Path, budget: int) -> None:
    runner = _runner(tmp_path, add_chain_tflite(200, distinct_ranges=True))  # 200 tables: 37.5 MiB > 16 MiB
    with pytest.raises(ResourceError) as err:
        runner.run(_feed())
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("node add") and "(QuantizedAdd_8p8to8)" in msg, msg
    assert "256x256 tables" in msg and "before the run" in msg and "--max-memory" in msg, msg
    # the node named is the first whose tables no longer fit: 85 distinct tables of 192 KiB fit 16 MiB, 86 not
    assert f"({BUDGET // TABLES + 1} distinct" in msg, msg
    kept = runner.engine.tables
    assert not kept.shared_tables and kept.shared_bytes == 0  # refused in advance: nothing was built


def test_tables_built_one_by_one_are_still_counted(tmp_path: Path, budget: int) -> None:
    """A table the plan cannot see (auto output ranges: the scaling follows the data) is still refused as it is
    built, naming the node."""
    runner = _runner(tmp_path, add_chain_tflite(200, distinct_ranges=True))
    for node in runner.engine.graph.nodes:  # drop the given output ranges: every add's range becomes auto
        if node.op == "QuantizedAdd_8p8to8":
            del node.inputs[6:]
    with pytest.raises(ResourceError) as err:
        runner.run(_feed())
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("node add") and "256x256 tables" in msg, msg
    kept = runner.engine.tables
    assert kept.total <= budget < kept.total + TABLES  # refused at the table that would not fit, none past it


def test_the_plan_names_the_tables_the_run_builds(tmp_path: Path) -> None:
    """The tables counted in advance are the ones the run keeps: the same keys and bytes (the run's own store)."""
    for distinct in (False, True):
        runner = _runner(tmp_path, add_chain_tflite(40, distinct_ranges=distinct))
        planned = {key: nbytes for _, key, nbytes in planned_tables(runner.engine.graph)}
        runner.run(_feed())
        kept = runner.engine.tables.shared_tables
        assert set(planned) == set(kept) and len(kept) == (40 if distinct else 2)
        assert all(planned[k] <= size <= planned[k] + 1024 for k, (_, size) in kept.items())


def test_nodes_with_the_same_ranges_share_one_table(tmp_path: Path, budget: int) -> None:
    runner = _runner(tmp_path, add_chain_tflite(200))
    runner.run(_feed())
    kept = runner.engine.tables
    # the first ADD (x + x) and the 199 others (prev + x, every prev at the same scale) need two scalings
    assert len(kept.shared_tables) <= 2 and kept.shared_bytes <= 2 * TABLES + 1024
    assert kept.total <= budget


def test_shared_tables_give_litert_s_results() -> None:
    assert_agrees(add_chain_tflite(2), n=2)  # the two scalings the 200-ADD chain shares (longer chains drift
    # from LiteRT by rounding, with or without sharing)
