"""Build and run nnlib device code (C with HVX intrinsics, Hexagon assembly) under ``qemu-hexagon`` (issue 36).

The toolchain is Debian 12's ``clang`` / ``lld`` (Hexagon back end) and ``qemu-user``'s ``qemu-hexagon``, a
Linux user-mode emulator with HVX. nnlib's sources stay outside the project: :func:`extract_functions` reads the
named functions, unedited, out of a XiaoMi/nnlib checkout (``hexagon/ops/src/*.c``) into a generated
translation unit in a work folder, which also includes nnlib's own headers (``hexagon/include``) and a harness
of ours; :func:`build` compiles it with the project's freestanding runtime (``tools/hvx/runtime``, stand-in
libc headers in ``tools/hvx/include``) for v66 with 128-byte HVX and links it statically with lld;
:func:`run` feeds it bytes on stdin and returns its stdout.
"""
from __future__ import annotations

import pathlib
import re
import subprocess

HERE = pathlib.Path(__file__).resolve().parent
RUNTIME = HERE / "runtime"
STANDIN = HERE / "include"
CFLAGS = ["--target=hexagon", "-mv66", "-mhvx", "-mhvx-length=128b", "-O2", "-ffreestanding", "-nostdlib",
          "-static", "-fuse-ld=lld", "-DV66=1", "-DHEXAGON_V66=1", "-DUSE_OS_LINUX", "-Wno-everything"]


class BuildError(RuntimeError):
    """A harness that does not extract, compile, link or run; the message names the step."""


def _definition_start(text: str, at: int) -> int:
    """Start of the declaration whose name is at ``at``: back over the lines of its return type and
    attributes, up to a blank line, a comment, a preprocessor line or the end of the previous item."""
    start = text.rfind("\n", 0, at) + 1
    while start > 0:
        prev_start = text.rfind("\n", 0, start - 1) + 1
        prev = text[prev_start:start - 1].strip()
        if (not prev or prev.endswith((";", "}", "*/")) or prev.startswith(("//", "#", "/*", "*"))):
            break
        start = prev_start
    return start


def _matching_brace(text: str, open_at: int) -> int:
    """Index just past the ``}`` closing the ``{`` at ``open_at`` (skips comments and strings)."""
    depth, i = 0, open_at
    pat = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|[{}]', re.DOTALL)
    for m in pat.finditer(text, open_at):
        tok = m.group(0)
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
            if depth == 0:
                return m.end()
    raise BuildError(f"unbalanced braces after offset {i}")


def extract_functions(source: pathlib.Path, names: list[str], after: str | None = None) -> str:
    """The definitions of ``names`` in ``source``, verbatim, in the order given, each preceded by a
    ``#line`` directive pointing back to the vendor file (so compiler messages name nnlib's lines). With
    ``after`` (a regex), only definitions past its first match count (e.g. past an ``#if 0`` block's ``#else``)."""
    text = source.read_text()
    skip = 0
    if after is not None:
        ma = re.search(after, text, re.MULTILINE)
        if not ma:
            raise BuildError(f"{source.name}: no match for {after!r}")
        skip = ma.end()
    parts = []
    for name in names:
        for m in re.finditer(r"\b" + re.escape(name) + r"\s*\(", text):
            if m.start() < skip:
                continue
            line_start = text.rfind("\n", 0, m.start()) + 1
            if text[line_start:m.start()].strip().startswith(("//", "*", "return")):
                continue
            brace, semi = text.find("{", m.end()), text.find(";", m.end())
            if brace < 0 or (0 <= semi < brace):
                continue  # a prototype or a call
            start = _definition_start(text, m.start())
            line = text.count("\n", 0, start) + 1
            parts.append(f'#line {line} "{source}"\n{text[start:_matching_brace(text, brace)]}\n')
            break
        else:
            raise BuildError(f"{source.name}: no definition of {name}")
    return "\n".join(parts)


def extract_items(source: pathlib.Path, names: list[str]) -> str:
    """Top-level non-function items of ``source``, verbatim: ``#define NAME ...`` lines and ``enum NAME {...};``
    / ``struct NAME {...};`` definitions, each with a ``#line`` directive."""
    text = source.read_text()
    parts = []
    for name in names:
        m = re.search(r"^#define\s+" + re.escape(name) + r"\b[^\n]*", text, re.MULTILINE)
        if m:
            end = m.end()
        else:
            m = re.search(r"^(?:typedef\s+)?(?:enum|struct)\s+" + re.escape(name) + r"\s*\{", text, re.MULTILINE)
            if not m:
                raise BuildError(f"{source.name}: no #define, enum or struct {name}")
            end = text.index(";", _matching_brace(text, m.end() - 1)) + 1
        parts.append(f'#line {text.count(chr(10), 0, m.start()) + 1} "{source}"\n{text[m.start():end]}\n')
    return "".join(parts)


def extract_span(source: pathlib.Path, first: str, last: str, inclusive: bool = True) -> str:
    """Whole lines of ``source``, verbatim, from the first line matching the regex ``first`` through the next
    line matching ``last`` (declarations the other extractors cannot name: a ``typedef`` of a function pointer,
    an anonymous ``enum``, an ``#ifdef`` block; or a whole run of a file's functions), with a ``#line`` directive.
    ``inclusive=False`` stops before the ``last`` line."""
    text = source.read_text()
    m1 = re.search(first, text, re.MULTILINE)
    if not m1:
        raise BuildError(f"{source.name}: no line matching {first!r}")
    start = text.rfind("\n", 0, m1.start()) + 1
    m2 = re.compile(last, re.MULTILINE).search(text, m1.start())
    if not m2:
        raise BuildError(f"{source.name}: no line matching {last!r} after {first!r}")
    end = text.find("\n", m2.end()) if inclusive else text.rfind("\n", 0, m2.start())
    return f'#line {text.count(chr(10), 0, start) + 1} "{source}"\n{text[start:end if end >= 0 else len(text)]}\n'


def tool_versions() -> dict[str, str]:
    """The first line of ``clang --version`` and ``qemu-hexagon --version``."""
    out = {}
    for tool in ("clang", "qemu-hexagon"):
        res = subprocess.run([tool, "--version"], capture_output=True, text=True, check=True)
        out[tool] = res.stdout.strip().splitlines()[0]
    return out


def nnlib_commit(nnlib: pathlib.Path) -> str:
    """The checkout's commit: ``git rev-parse HEAD`` there, else the ``NNLIB_COMMIT`` file of an archive."""
    res = subprocess.run(["git", "-C", str(nnlib), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    if res.returncode == 0:
        return res.stdout.strip()
    marker = nnlib / "NNLIB_COMMIT"
    if marker.is_file():
        return marker.read_text().strip()
    raise BuildError(f"{nnlib}: not a git checkout and no NNLIB_COMMIT file naming its commit")


def build(nnlib: pathlib.Path, work: pathlib.Path, name: str, unit: str, asm: list[str] = (),
          sources: list[str] = (), includes: list[pathlib.Path] = ()) -> pathlib.Path:
    """Write ``unit`` (generated C) to ``work/name.c``, compile it with the runtime, the nnlib C files
    ``sources`` (compiled whole, unedited) and assembly files ``asm`` (paths under the checkout), link; returns
    the executable. ``includes`` are searched first (e.g. ``include_os/`` for nnlib's whole ``nn_graph.h``)."""
    work.mkdir(parents=True, exist_ok=True)
    src = work / f"{name}.c"
    src.write_text(unit)
    exe = work / name
    cmd = ["clang", *CFLAGS, *[a for d in includes for a in ("-I", str(d))], "-I", str(STANDIN), "-I", str(RUNTIME), "-I", str(nnlib / "hexagon" / "include"),
           "-I", str(nnlib / "interface"),
           "-o", str(exe), str(src), str(RUNTIME / "hvxrt.c"), str(RUNTIME / "hvxmath.c"),
           *[str(nnlib / a) for a in (*sources, *asm)]]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise BuildError(f"compiling {name} failed:\n{' '.join(cmd)}\n{res.stderr[-4000:]}")
    return exe


def run(exe: pathlib.Path, stdin: bytes, timeout: float = 600) -> bytes:
    """Run ``exe`` under ``qemu-hexagon`` with ``stdin``; returns its stdout (a non-zero exit is an error)."""
    res = subprocess.run(["qemu-hexagon", str(exe)], input=stdin, capture_output=True, timeout=timeout, check=False)
    if res.returncode != 0:
        raise BuildError(f"{exe.name} exited {res.returncode}: {res.stderr.decode(errors='replace')[-2000:]}")
    return res.stdout
