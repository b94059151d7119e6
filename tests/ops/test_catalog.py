"""The op catalog against the two op documents (hexagon_nn_ops.txt, hexagon_nn_ops_early.txt).

The documents are re-read here independently of the catalog: op names come
from the heading lines, counts from the "N inputs" / "N outputs" line of each
op's block. Where the catalog departs from a stated count on purpose (the
text's own errata), the departure is listed below with its reason.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from hexnn_import.ops import CATALOG
from hexnn_import.ops.catalog_data import OPS

SPEC_DIR = Path(__file__).resolve().parent.parent.parent.parent / "shared" / "spec"
if not SPEC_DIR.is_dir():  # a checkout outside the usual layout
    SPEC_DIR = Path("/work/shared/spec")
MAIN_DOC = SPEC_DIR / "hexagon_nn_ops.txt"
EARLY_DOC = SPEC_DIR / "hexagon_nn_ops_early.txt"

ALLOWED_TYPES = {"quint8", "qint32", "qint16", "quint16", "int32", "uint8", "int16", "float", "any", "shape",
                 "quint8_d32", "quint16_d32"}
ENTRY_KEYS = {"inputs", "outputs", "n_inputs", "n_outputs", "source", "doc", "notes"}

# A heading is a line starting in column 0 with one op name, or several joined
# by "/", optionally followed by "(text)" and a colon (a few headings lack it).
HEADING = re.compile(r"^([A-Za-z][A-Za-z0-9_]*(?:/[A-Za-z][A-Za-z0-9_]*)*)(?:[ \t]*\([^)]*\))?[ \t]*:?[ \t]*$")
NOT_OPS = {"Examples", "Example"}

# "6 inputs (+2 optional):", "4 or 7 inputs (last 3 optional)", "0-N outputs: (optional)", "No output".
COUNT = re.compile(r"^\s+(?P<expr>No|[0-9nN][0-9nN+\-./ ()or]*?)\s+(?P<kind>input|output)s?\s*:?\s*"
                   r"(?:\((?P<paren>[^)]*)\))?\s*:?\s*$")

docs_available = pytest.mark.skipif(not (MAIN_DOC.exists() and EARLY_DOC.exists()),
                                    reason="op documents (../shared/spec beside the checkout) not found")


def heading_blocks(path: Path) -> list[tuple[list[str], list[str]]]:
    """(op names, block lines) for every heading; consecutive headings share the block that follows."""
    blocks: list[tuple[list[str], list[str]]] = []
    names: list[str] = []
    body: list[str] = []
    for line in path.read_text().splitlines():
        m = HEADING.match(line)
        if m and m.group(1) not in NOT_OPS:
            if body:  # a heading after body text starts a new block
                blocks.append((names, body))
                names, body = [], []
            names.extend(m.group(1).split("/"))
        elif names:
            body.append(line)
    if names:
        blocks.append((names, body))
    return blocks


def doc_names(path: Path) -> list[str]:
    """Every op name the document gives a heading to, in order."""
    return [name for names, _ in heading_blocks(path) for name in names]


def parse_count(expr: str, paren: str | None) -> tuple[int | None, int | None]:
    """(min, max) from a count expression; max None for variadic ("n", "N+1", "3n+1", "1..n")."""
    expr = expr.strip()
    if expr == "No":
        return 0, 0
    if re.search(r"[nN]", expr):
        lead = re.match(r"(\d+)\s*(?:\.\.|-)\s*[nN]$", expr)
        return (int(lead.group(1)) if lead else None), None
    m = re.fullmatch(r"(\d+)\s*\(or (\d+)\)", expr)
    if m:
        a, b = sorted((int(m.group(1)), int(m.group(2))))
        return a, b
    m = re.fullmatch(r"(\d+)\s*(?:\.\.\.?|-|/|or)\s*(\d+)", expr)
    if m:
        return int(m.group(1)), int(m.group(2))
    n = int(expr)
    extra = re.search(r"\+(\d+) optional", paren or "")
    return n, n + (int(extra.group(1)) if extra else 0)


def stated_counts(body: list[str]) -> dict[str, tuple[int | None, int | None]]:
    """The first stated input count and output count of a block."""
    found: dict[str, tuple[int | None, int | None]] = {}
    for line in body:
        m = COUNT.match(line)
        if m and m.group("kind") not in found:
            found[m.group("kind")] = parse_count(m.group("expr"), m.group("paren"))
    return found


# Deliberate departures from a block's stated count: (op, "input"|"output") -> (catalog counts, why).
COUNT_ERRATA: dict[tuple[str, str], tuple[tuple[int, int | None], str]] = {
    ("Close_f", "input"): ((2, 3), "optional allowable error input"),
    ("ResizeBilinear_f", "input"): ((2, 3), "lists an optional align_corners input 2"),
    ("ResizeBilinear_f", "output"): ((1, 1), "says 3 outputs, lists one"),
    ("QuantizedResizeBilinear_8_d32", "input"): ((4, 5), "lists an optional align_corners input 4"),
    ("QuantizedTransposeConv2d_16x16p32to16", "input"): ((13, 13), "16-bit variant lacks inputs 13, 14"),
    ("SpaceToDepth_16", "input"): ((4, 4), "says 2 inputs, lists 4"),
    ("BoxWithNmsLimit_f", "output"): ((4, 6), "outputs 4, 5 are optional"),
    **{(op, "input"): ((6, 8), "inputs 6, 7 marked optional")
       for op in ("QuantizedAdd_8p8to8_d32", "QuantizedSub_8p8to8_d32", "QuantizedAdd_8x8to8_d32",
                  "QuantizedSub_8x8to8_d32", "QuantizedMinimum", "QuantizedMaximum")},
    **{(op, "input"): ((12, 13), "hexagon_nn 2.14.1 takes 12..13 (op_dwise_snode_8bit.c, op_supernode.c "
                                 "NN_IOCOUNT_RANGE(12,13)); prepare.c make_supernodes gives input 12, the "
                                 "channel scales")
       for op in ("DepthwiseSupernode_8x8p8to8", "DepthwiseSupernode_8x8p8to8_d32",
                  "DepthwiseSupernode_8x8p32to8", "DepthwiseSupernode_8x8p32to8_d32")},
    **{(op, "input"): ((12, 13), "nnlib df7ad3c op_supernode_new.c NN_IOCOUNT_RANGE(12,13); shortin_supernode_check "
                                 "never reads input 12 (channel scales)")
       for op in ("InputSupernode_8x8p8to8_outd32", "InputSupernode_8x8p32to8_outd32")},
}


def counts_cases() -> list[tuple[str, str, tuple[int | None, int | None]]]:
    """(op, kind, stated count) for every counted op of the main document and the early-only ops."""
    cases = []
    main = set(doc_names(MAIN_DOC)) if MAIN_DOC.exists() else set()
    for path in (MAIN_DOC, EARLY_DOC):
        if not path.exists():
            continue
        for names, body in heading_blocks(path):
            for kind, count in stated_counts(body).items():
                for name in names:
                    if path == MAIN_DOC or name not in main:
                        cases.append((name, kind, count))
    return cases


# ----------------------------------------------------------------------------
# Every documented name is in the catalog, and nothing else is
# ----------------------------------------------------------------------------

@docs_available
def test_heading_parser_finds_known_forms() -> None:
    main = doc_names(MAIN_DOC)
    early = doc_names(EARLY_DOC)
    assert 240 <= len(main) <= 270, len(main)
    assert len(set(main)) == len(main)
    # slash heading, multi-name heading, heading with text, heading without colon
    for name in ("QuantizedTransposeConv2d_8x8p8to8", "QuantizedTransposeConv2d_16x16p32to16", "Close_qint32",
                 "QuantizedSum_8to32", "QuantizedMean_8", "QuantizedMul_8x8to8", "QuantizedMul_8x8to8_d32"):
        assert name in main
    assert "AutoQuantize" in early and "QuantizedAdd_8x8to8_d32" in early
    for word in ("Examples", "Theory", "for", "Inputs", "Outputs"):
        assert word not in main and word not in early


@docs_available
def test_every_documented_op_is_in_catalog() -> None:
    names = set(doc_names(MAIN_DOC)) | set(doc_names(EARLY_DOC))
    missing = sorted(names - set(CATALOG))
    assert not missing, f"documented ops missing from the catalog: {missing}"


#: Ops no document names, taken from hexagon_nn 2.14.1's op table because prepare.c creates them
#: (source "nnlib"; each entry's notes cite the nnlib file and its NN_IOCOUNT).
NNLIB_ONLY = {"QuantizedPadForConv_8_d32", "QuantizedSoftmax_8_d32", "Requantize_8to8_d32", "QuantizedPRelu_8_d32",
              "QuantizedPRelu_8_V2_d32", "DepthToSpace_8_d32", "QuantizedNeg_8_d32", "QuantizedSplit_8_d32",
              "QuantizedInstanceNorm_8_d32", "QuantizedPad_8_d32", "QuantizedMatMul_8x8to32_ref",
              "Convert_to_d32_16b", "Convert_from_d32_16b", "QuantizedAdd_u16_d32", "QuantizedSub_u16_d32",
              "QuantizedPad_u16_d32", "Supernode_16x16p32to16", "Supernode_u16x16p32to16_d32"}  # the 16-bit d32 family: counts in tests/ops/test_d32_u16.py


@docs_available
def test_catalog_has_no_undocumented_op() -> None:
    names = set(doc_names(MAIN_DOC)) | set(doc_names(EARLY_DOC))
    extra = sorted(set(CATALOG) - names - NNLIB_ONLY)
    assert not extra, f"catalog ops no document names: {extra}"
    assert not NNLIB_ONLY & names, "an nnlib-only op is documented after all: give it its document source"


@docs_available
def test_source_says_which_document() -> None:
    main, early = set(doc_names(MAIN_DOC)), set(doc_names(EARLY_DOC))
    for name, spec in CATALOG.items():
        if name in NNLIB_ONLY:
            assert spec.source == "nnlib" and "op table" in spec.notes and "NN_IOCOUNT" in spec.notes, name
            continue
        expected = "both" if name in main and name in early else ("ops" if name in main else "early")
        assert spec.source == expected, name


def test_nnlib_only_counts_are_nnlibs() -> None:
    """NN_IOCOUNT of each op's nn_node_ops in nnlib 2.14.1 (op_pad_d32.c, op_softmax_d32.c, op_requantize.c,
    op_prelu_d32.c, op_prelu_v2_d32.c, op_depthspace_d32.c, op_add_d32.c, op_instancenorm_hvx.c; op_chanshuffle_d32.c's
    split: 4 in, at least 4 out)."""
    want = {"QuantizedPadForConv_8_d32": (5, 5), "QuantizedSoftmax_8_d32": (3, 4), "Requantize_8to8_d32": (5, 5),
            "QuantizedPRelu_8_d32": (4, 4), "QuantizedPRelu_8_V2_d32": (6, 8), "DepthToSpace_8_d32": (4, 5),
            "QuantizedNeg_8_d32": (3, 3), "QuantizedInstanceNorm_8_d32": (3, 3), "QuantizedPad_8_d32": (4, 6)}
    split = CATALOG["QuantizedSplit_8_d32"]
    assert (split.min_inputs, split.max_inputs) == (4, 4) and split.max_outputs is None
    for name, counts in want.items():
        spec = CATALOG[name]
        assert (spec.min_inputs, spec.max_inputs) == counts and (spec.min_outputs, spec.max_outputs) == (3, 3), name
        assert spec.inputs[0].types == ("quint8_d32",) and spec.outputs[0].types == ("quint8_d32",), name


@docs_available
def test_early_only_names() -> None:
    early_only = set(doc_names(EARLY_DOC)) - set(doc_names(MAIN_DOC))
    assert early_only == {"QuantizeForTestd32", "QuantizedAdd_8x8to8", "QuantizedAdd_8x8to8_d32",
                          "QuantizedSub_8x8to8_d32"}


# ----------------------------------------------------------------------------
# Counts agree with each op's "N inputs" / "N outputs" line
# ----------------------------------------------------------------------------

@docs_available
@pytest.mark.parametrize("op,kind,stated", counts_cases(), ids=lambda v: str(v))
def test_counts_match_document(op: str, kind: str, stated: tuple[int | None, int | None]) -> None:
    spec = CATALOG[op]
    got = (spec.min_inputs, spec.max_inputs) if kind == "input" else (spec.min_outputs, spec.max_outputs)
    if (op, kind) in COUNT_ERRATA:
        expected, _why = COUNT_ERRATA[(op, kind)]
        assert got == expected
        return
    lo, hi = stated
    if hi is None:  # variadic
        assert got[1] is None, f"{op} {kind}s are variadic in the text"
        if lo is not None:
            assert got[0] == lo
    else:
        assert got == (lo, hi)


def test_count_parser() -> None:
    assert parse_count("6", "+2 optional") == (6, 8)
    assert parse_count("4 or 7", "last 3 optional") == (4, 7)
    assert parse_count("4 (or 3)", None) == (3, 4)
    assert parse_count("13/15", None) == (13, 15)
    assert parse_count("4...6", None) == (4, 6)
    assert parse_count("3n+1", None) == (None, None)
    assert parse_count("1..n", None) == (1, None)
    assert parse_count("No", None) == (0, 0)


# ----------------------------------------------------------------------------
# Every entry is well formed
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(OPS))
def test_entry_well_formed(name: str) -> None:
    entry = OPS[name]
    assert set(entry) <= ENTRY_KEYS, set(entry) - ENTRY_KEYS
    assert entry.get("source", "ops") in {"ops", "early", "both", "nnlib"}
    assert isinstance(entry.get("doc"), str) and entry["doc"].strip()
    spec = CATALOG[name]
    for slot in spec.inputs + spec.outputs:
        assert slot.name and re.fullmatch(r"[a-z][a-z0-9_]*", slot.name), slot.name
        assert set(slot.types) <= ALLOWED_TYPES, (slot.name, slot.types)
    assert not any(s.optional for s in spec.outputs), "optional outputs are expressed with n_outputs"
    flags = [s.optional for s in spec.inputs]
    assert flags == sorted(flags), "optional inputs must be trailing"
    assert len({s.name for s in spec.inputs}) == len(spec.inputs), "duplicate input names"
    assert len({s.name for s in spec.outputs}) == len(spec.outputs), "duplicate output names"
    for lo, hi, n_slots in ((spec.min_inputs, spec.max_inputs, len(spec.inputs)),
                            (spec.min_outputs, spec.max_outputs, len(spec.outputs))):
        assert isinstance(lo, int) and lo >= 0
        assert hi is None or (isinstance(hi, int) and lo <= hi)
        if hi is not None:  # a fixed or bounded count has a slot for every position
            assert hi == n_slots
    if spec.max_inputs is None or spec.max_outputs is None:
        assert entry.get("notes"), "a variadic op describes its repeat pattern in notes"


def test_min_max_slots_are_float() -> None:
    for spec in CATALOG.values():
        for slot in spec.inputs + spec.outputs:
            if re.fullmatch(r"(\w+_)?(min|max)", slot.name):
                assert slot.types == ("float",), (spec.name, slot.name)


# ----------------------------------------------------------------------------
# Spot checks worked from the text
# ----------------------------------------------------------------------------

def test_conv2d_8x8to32() -> None:
    spec = CATALOG["QuantizedConv2d_8x8to32"]
    assert (spec.min_inputs, spec.max_inputs) == (7, 7)
    assert (spec.min_outputs, spec.max_outputs) == (3, 3)
    assert spec.outputs[0].types == ("qint32",)
    assert spec.inputs[6].types == ("shape",)
    assert [s.name for s in spec.outputs[1:]] == ["min", "max"]


def test_supernode_p32() -> None:
    spec = CATALOG["Supernode_8x8p32to8"]
    assert (spec.min_inputs, spec.max_inputs) == (12, 13)
    assert spec.inputs[7].types == ("qint32",)
    assert spec.inputs[12].optional
    assert CATALOG["Supernode_8x8p8to8"].inputs[7].types == ("quint8",)
    assert CATALOG["Supernode_8x8p32to8_d32"].inputs[0].types == ("quint8_d32",)


def test_transpose_conv() -> None:
    spec = CATALOG["QuantizedTransposeConv2d_8x8p32to8"]
    assert (spec.min_inputs, spec.max_inputs) == (13, 15)
    assert spec.inputs[6].types == ("int32",) and spec.inputs[7].types == ("shape",)
    assert (CATALOG["QuantizedTransposeConv2d_8x8p8to8"].min_inputs,
            CATALOG["QuantizedTransposeConv2d_8x8p8to8"].max_inputs) == (13, 15)


def test_close_q_quint8() -> None:
    spec = CATALOG["Close_q_quint8"]
    assert (spec.min_inputs, spec.max_inputs) == (6, 8)
    assert (spec.min_outputs, spec.max_outputs) == (0, 0)


def test_graph_io() -> None:
    inp, out = CATALOG["INPUT"], CATALOG["OUTPUT"]
    assert (inp.min_inputs, inp.max_inputs) == (0, 0)
    assert inp.max_outputs is None
    assert out.max_inputs is None
    assert (out.min_outputs, out.max_outputs) == (0, 0)


def test_variadic_patterns() -> None:
    concat = CATALOG["QuantizedConcat_8"]
    assert concat.min_inputs == 4 and concat.max_inputs is None
    assert [s.name for s in concat.inputs] == ["dim", "data", "in_min", "in_max"]
    split = CATALOG["QuantizedSplit_8"]
    assert split.min_outputs == 3 and split.max_outputs is None
    for name in ("Nop", "Sink", "AddN_f", "Pack_f", "Split_f", "Variable", "Assign", "Concat_f"):
        spec = CATALOG[name]
        assert spec.max_inputs is None or spec.max_outputs is None, name


def test_d32_conversions_by_name() -> None:
    # The document swaps the two descriptions; the catalog goes by the names.
    to_d32, from_d32 = CATALOG["Convert_to_d32"], CATALOG["Convert_from_d32"]
    assert to_d32.inputs[0].types == ("quint8",) and to_d32.outputs[0].types == ("quint8_d32",)
    assert (to_d32.min_inputs, to_d32.max_inputs) == (1, 5)
    assert from_d32.inputs[0].types == ("quint8_d32",) and from_d32.outputs[0].types == ("quint8",)


def test_max_min_errata_listed_as_min_then_max() -> None:
    for name in ("QuantizedMatMul_8x8to32", "QuantizedBiasAdd_8p8to32", "QuantizedBiasAdd_32p32to32"):
        spec = CATALOG[name]
        assert [s.name for s in spec.outputs] == ["data", "min", "max"], name
        assert "max,min" in spec.notes, name


def test_odd_input_orders_kept() -> None:
    assert CATALOG["QuantizedChannelShuffle_8"].inputs[0].name == "groups"
    assert [s.name for s in CATALOG["MirrorPad_8"].inputs] == ["data", "pads", "in_min", "in_max"]
    assert [s.name for s in CATALOG["TopK_8"].outputs] == ["values", "indices", "min", "max"]
    assert CATALOG["QuantizedGroupedConv2d_8x8p32to8"].inputs[2].name == "bias"
    assert CATALOG["ConcatV2_f"].inputs[-1].name == "dim"
