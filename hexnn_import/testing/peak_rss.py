"""Run the CLI in a fresh process and read its peak resident size (issues 20 and 38: memory bounds, measured).

``python -c PEAK_WRAPPER OUT_FILE ARGS...`` runs ``hexnn_import.cli`` as ``python -m`` would and writes the
process's high-water mark in KiB to ``OUT_FILE`` on exit: VmHWM of ``/proc/self/status`` (Linux). ru_maxrss would
not do: Linux carries it over exec from the parent, so it would report the caller's own size.
"""
from __future__ import annotations

PEAK_WRAPPER = ("import atexit, runpy, sys\n"
                "out = sys.argv.pop(1)\n"
                "def peak():\n"
                "    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
                "    open(out, 'w').write(hwm.split()[1])\n"
                "atexit.register(peak)\n"
                "runpy.run_module('hexnn_import.cli', run_name='__main__', alter_sys=True)\n")
