"""Kernel modules; importing this package registers every kernel.

Each module holds one op family and registers its classes with the explicit
``@register`` decorator; every module in this folder is imported here.
"""
import pkgutil
from importlib import import_module

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    import_module(f"{__name__}.{_info.name}")
