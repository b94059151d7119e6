"""``build_runner.sh``: compiles xs3-export's ``xs3_runner.c`` against a lib_nn checkout on x86.

lib_nn's portable C is built as the lib_nn oracle and XMOS's x86 unit tests
build it (``-O1 -fwrapv -DNN_USE_REF``; sources ``lib_nn/src/c/*.c``,
``lib_nn/src/c/util/*/*.c``, ``lib_nn/src/asm/asm_constants.c``) into an
archive kept in the build folder (rebuilt when the checkout, compiler or flags
change); the runner is compiled with ``-std=c99 -Wall -Wextra -Werror``
(lib_nn's headers as system headers: their warnings are not the runner's).
The script refuses, with the reason, a header the runner cannot run
(:func:`.c_runner.runner_refusal`) and, without ``--xs3-part``, a header that
holds only the XS3 part of its model (:func:`.c_runner.part_reason`).
"""
from __future__ import annotations

import re

SCRIPT = r"""#!/bin/sh
# build_runner.sh: compile xs3_runner.c (the XS3 network @MODEL@) against a lib_nn checkout on x86, with
# lib_nn's portable C (-DNN_USE_REF). Written by hexnn-import (hexnn_import.xs3.c_runner).
#   sh build_runner.sh --libnn DIR [--out FILE] [--build DIR] [--cc CC] [--xs3-part]
# DIR: a checkout of github.com/xmos/lib_nn (commit 96bd67c: DIR/lib_nn/api, DIR/lib_nn/src).
# Then: ./xs3_runner [--list] [--dump] OUT_DIR INPUT.bin ...  (one raw int8 file per network input).
set -eu
MODEL='@MODEL@'
REFUSAL='@REFUSAL@'
PART='@PART@'
SYMMETRIC=@SYMMETRIC@
here=$(cd "$(dirname "$0")" && pwd)
libnn= out="$here/xs3_runner" build="$here/build" cc="${CC:-gcc}" part=0
usage() { sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --libnn) libnn=${2:?--libnn DIR}; shift 2 ;;
    --out) out=${2:?--out FILE}; shift 2 ;;
    --build) build=${2:?--build DIR}; shift 2 ;;
    --cc) cc=${2:?--cc CC}; shift 2 ;;
    --xs3-part) part=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build_runner.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
if [ -n "$REFUSAL" ]; then
  echo "build_runner.sh: $MODEL: refused: $REFUSAL" >&2; exit 3
fi
if [ -n "$PART" ] && [ "$part" = 0 ]; then
  echo "build_runner.sh: $MODEL: refused: the header holds only the XS3 part of the model: $PART; --xs3-part builds a runner of the XS3 layers that takes every network input as a file" >&2
  exit 3
fi
if [ -z "$libnn" ]; then
  echo "build_runner.sh: --libnn DIR is required (a checkout of github.com/xmos/lib_nn, commit 96bd67c)" >&2; exit 2
fi
L="$libnn/lib_nn"
if [ ! -f "$L/api/nn_operator.h" ] || [ ! -d "$L/src/c" ]; then
  echo "build_runner.sh: $libnn is not a lib_nn checkout (no lib_nn/api/nn_operator.h, lib_nn/src/c)" >&2; exit 2
fi
flags="-O1 -fwrapv -DNN_USE_REF"
if [ "$SYMMETRIC" = 1 ]; then flags="$flags -DCONFIG_SYMMETRIC_SATURATION_GLOBAL=1"; fi
lib="$build/lib_nn/liblib_nn_ref.a"
stamp="$(cd "$L" && pwd)|$cc|$flags"
mkdir -p "$build/lib_nn"
if [ ! -f "$lib" ] || [ "$(cat "$build/lib_nn/stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -f "$build/lib_nn/"*.o "$lib"
  for f in "$L"/src/c/*.c "$L"/src/c/util/*/*.c "$L"/src/asm/asm_constants.c; do
    $cc -c $flags -I"$L/api" -I"$L/src" -I"$L/src/asm" "$f" -o "$build/lib_nn/$(basename "$f" .c).o"
  done
  ar rcs "$lib" "$build/lib_nn/"*.o
  printf '%s\n' "$stamp" > "$build/lib_nn/stamp"
fi
partflag=
if [ "$part" = 1 ]; then partflag=-DXR_XS3_PART; fi
$cc -std=c99 $flags $partflag -Wall -Wextra -Werror -isystem "$L/api" -isystem "$L/src" -isystem "$L/src/asm" \
  -I"$here" "$here/xs3_runner.c" "$lib" -lm -o "$out"
echo "built $out"
"""


def _sh_quoted(text: str) -> str:
    """Text for inside single quotes in sh: printable ASCII, each ' as '\\''."""
    return re.sub(r"[^ -~]", "_", text).replace("'", "'\\''")


def build_script(model: str, refusal: str | None, part: str | None, symmetric: bool) -> str:
    """The build script of one model's runner (module doc)."""
    return (SCRIPT.replace("@MODEL@", _sh_quoted(model)).replace("@REFUSAL@", _sh_quoted(refusal or ""))
            .replace("@PART@", _sh_quoted(part or "")).replace("@SYMMETRIC@", str(int(symmetric))))
