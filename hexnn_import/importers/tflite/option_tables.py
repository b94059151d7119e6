"""A builtin operator's options table read whole at load time, its field accessors then answering from memory.

The reader reads every field of an options table inside its parse guard (a corrupt table fails there, not in a
handler). The handlers and the layer records ask the same fields again (``FusedActivationFunction()`` four
times an ADD), each call a vtable walk through the ``flatbuffers`` package (about 5 us; issue 38: a tenth of
a 10,000-ADD import). :func:`read_options` returns the table as an instance of a subclass of its generated
``tflite`` class whose one-argument accessors (``Padding()``, ``NewShapeAsNumpy()``...) return the values
read at load; accessors taking an index (``NewShape(j)``) and ``_tab`` are the generated ones, unchanged.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

#: generated options class -> its one-argument accessors (``Init`` and the root helpers left out)
_ACCESSORS: dict[type, list[str]] = {}
#: generated options class -> its subclass answering those accessors from the values read
_CACHED: dict[type, type] = {}


def accessors(cls: type) -> list[str]:
    """The field accessors of a generated table class that take no argument but the table."""
    names = _ACCESSORS.get(cls)
    if names is None:
        names = [n for n, fn in inspect.getmembers(cls, inspect.isfunction)
                 if n[:1].isupper() and n != "Init" and not n.startswith("GetRootAs")
                 and not n.endswith("BufferHasIdentifier") and len(inspect.signature(fn).parameters) == 1]
        _ACCESSORS[cls] = names
    return names


def _answer(name: str) -> Callable[[Any], Any]:
    def field(self: Any) -> Any:
        return self._values[name]

    field.__name__ = name
    return field


def _cached_class(cls: type) -> type:
    sub = _CACHED.get(cls)
    if sub is None:
        body: dict[str, Any] = {name: _answer(name) for name in accessors(cls)}
        body.update(__slots__=("_values",), __module__=cls.__module__,
                    __doc__=f"{cls.__name__} answering its field accessors from the values read at load.")
        sub = _CACHED[cls] = type(cls.__name__, (cls,), body)
    return sub


def read_options(cls: type, buf: bytes, pos: int) -> tuple[Any, dict[str, Any]]:
    """The ``cls`` table at ``pos`` with every field read now (vectors whole, through their ``*AsNumpy``
    accessors, which check the vector lies inside the file), and those values by accessor name."""
    obj = _cached_class(cls)()
    obj.Init(buf, pos)
    values = {name: getattr(cls, name)(obj) for name in accessors(cls)}
    obj._values = values
    return obj, values
