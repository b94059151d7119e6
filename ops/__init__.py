"""The op catalog, the kernel registry and the numpy kernels (Hexagon semantics)."""
from hexnn_import.ops.catalog import CATALOG, OpSpec, get_spec
from hexnn_import.ops.registry import Kernel, KernelContext, get_kernel, has_kernel, kernel_names, register, run_op

__all__ = ["CATALOG", "OpSpec", "get_spec", "Kernel", "KernelContext", "get_kernel", "has_kernel",
           "kernel_names", "register", "run_op"]
