"""Running prim::FusionGroup: a compiled kernel behind a guard on the actual inputs, else the subgraph.

(seed: jit-overview.md "Post-derivative optimization": the Operation of a FusionGroup node generates a kernel
for its subgraph; TorchScript's fusers guard a kernel with a check of the inputs and keep a fallback graph for
when it fails.) The kernel's C source is generated when the plan's Code is built, and compiled on the first
call whose inputs pass the guard:

- every tensor input is a strided CPU tensor (torch.Tensor or nn.Parameter) of the dtype the plan was specialized
  to, and all of them have the same shape (the kernel does not broadcast);
- every one is contiguous, or a row-major slice (a chunk of the LSTM's gates), read row by row: eager's results
  are contiguous for both (a transposed input, whose eager result is transposed, fails);
- while grad mode is on, none of them requires grad (kernels have no backward).

Then fresh outputs of that shape are allocated and the kernel fills them (from PARALLEL_MIN_ELEMENTS elements
on, in chunks on torch.get_num_threads() threads, as eager's intra-op parallelism would). Otherwise, and when no
kernel could be generated or compiled, the subgraph runs in the interpreter, which broadcasts, promotes dtypes,
records autograd and raises eager's errors, as the nodes did before fusion.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch

from tsjit import log
from tsjit.codegen.c_kernel import FLOAT_ARGUMENT, INT_ARGUMENT, KERNEL_NAME, Kernel, NotFusible, generate_kernel
from tsjit.codegen.compiler import load_kernel
from tsjit.ir.graph import Graph, Node
from tsjit.runtime.interpreter import Code, InterpreterState
from tsjit.runtime.operations import Operation

_PLAIN_TENSOR_TYPES = frozenset({torch.Tensor, torch.nn.Parameter})
PARALLEL_MIN_ELEMENTS = 1 << 16  # from here on, kernels run in chunks on torch.get_num_threads() threads
_CHUNK_ALIGNMENT = 64  # chunks start at multiples of 64 elements: on cache-line boundaries
_C_ARGUMENT_TYPES = {INT_ARGUMENT: (ctypes.c_int64,), FLOAT_ARGUMENT: (ctypes.c_double,)}
_TENSOR_C_TYPES = (ctypes.c_void_p, ctypes.c_int64)  # a pointer and a row stride


def fusion_group_operation(node: Node) -> Operation:
    """The Operation of a prim::FusionGroup node: its kernel when the inputs allow, else its subgraph."""
    subgraph = node.g("Subgraph")
    fallback = interpreted(subgraph)
    try:
        kernel = generate_kernel(subgraph)
    except NotFusible as error:
        log.graph_update(f"interpreting a FusionGroup subgraph: {error}")
        return fallback
    return _guarded(kernel, _LazyKernel(kernel), fallback)


def interpreted(subgraph: Graph) -> Operation:
    """Run `subgraph` in the interpreter (the fallback of a FusionGroup)."""
    code = Code(subgraph)
    return lambda *values: InterpreterState(code, values).run()


class _LazyKernel:
    """The kernel's C function, compiled on first use (None when that failed: then always None)."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.lock = threading.Lock()
        self.loaded = False
        self.function: Callable[..., Any] | None = None

    def get(self) -> Callable[..., Any] | None:
        if not self.loaded:
            with self.lock:
                if not self.loaded:
                    self.function = self._load()
                    self.loaded = True
        return self.function

    def _load(self) -> Callable[..., Any] | None:
        function = load_kernel(self.kernel.source, KERNEL_NAME)
        if function is None:
            log.graph_update("no compiled kernel: interpreting the FusionGroup subgraph")
            return None
        arguments = [t for kind in self.kernel.arguments for t in _C_ARGUMENT_TYPES.get(kind, _TENSOR_C_TYPES)]
        function.argtypes = [ctypes.c_int64, ctypes.c_int64, *arguments, *[ctypes.c_void_p] * self.kernel.num_outputs]
        function.restype = None
        return function


def _guarded(kernel: Kernel, lazy: _LazyKernel, fallback: Operation) -> Operation:
    """The kernel's Operation. Its C function takes (rows, n), then per input a pointer and a row stride (tensors)
    or a value (scalars), then the output pointers, and computes rows x n elements: one row of all of them when
    every input is contiguous, or the rows of row-major slices (LSTM gate chunks), given their row strides.

    A call costs a few microseconds of Python (a FusionGroup of tiny ops only pays off if that is less than the
    ops it replaces), so everything that does not depend on the inputs is decided here, once: which arguments are
    tensors, the checks' constants. One pass over the inputs both checks them and builds the C arguments; a
    contiguous input gets the row stride `columns` (the kernel reads row 0 only when all inputs are contiguous)."""
    kinds = tuple(kind not in _C_ARGUMENT_TYPES for kind in kernel.arguments)
    first, dtype, count = kinds.index(True), kernel.dtype, kernel.num_outputs
    plain, is_grad_enabled, empty_like = _PLAIN_TENSOR_TYPES, torch.is_grad_enabled, torch.empty_like
    contiguous = torch.contiguous_format
    pointers = (*[p for tensor in kinds for p in ((True, False) if tensor else (False,))], *[True] * count)
    itemsize = dtype.itemsize

    def operation(*values):
        reference = values[first]
        if type(reference) not in plain:
            return fallback(*values)
        shape, grad = reference.shape, is_grad_enabled()
        columns = shape[-1] if shape else 1
        arguments, all_contiguous = [], True
        for value, tensor in zip(values, kinds):
            if not tensor:
                arguments.append(value)
                continue
            if (type(value) not in plain or value.dtype is not dtype or not value.is_cpu or value.shape != shape
                    or (grad and value.requires_grad)):
                return fallback(*values)
            if value.is_contiguous():
                arguments += (value.data_ptr(), columns)
                continue
            row_stride = _row_stride(value)
            if row_stride is None:
                return fallback(*values)
            arguments += (value.data_ptr(), row_stride)
            all_contiguous = False
        function = lazy.function if lazy.loaded else lazy.get()
        if function is None:
            return fallback(*values)
        n = reference.numel()
        outputs = [empty_like(reference, memory_format=contiguous) for _ in range(count)]
        if n:
            arguments += [output.data_ptr() for output in outputs]
            if not all_contiguous:
                function(n // columns, columns, *arguments)
            elif n < PARALLEL_MIN_ELEMENTS:
                function(1, n, *arguments)
            else:
                _run_in_parallel(function, n, arguments, pointers, itemsize)
        return outputs[0] if count == 1 else tuple(outputs)

    return operation


def _row_stride(tensor: torch.Tensor) -> int | None:
    """For a row-major slice (the last dimension contiguous, the others collapsing into rows of one stride, like a
    chunk of a matrix's columns; eager's result for it is contiguous), the stride between its rows; else None."""
    sizes, strides = tensor.shape, tensor.stride()
    if len(sizes) == 2:  # a chunk of a matrix (the LSTM's gates), without the general loop's cost
        if sizes[1] != 1 and strides[1] != 1:
            return None
        return strides[0] if sizes[0] != 1 else 0
    if not sizes or (sizes[-1] != 1 and strides[-1] != 1):
        return None
    row_stride, expected = 0, None
    for size, stride in zip(reversed(sizes[:-1]), reversed(strides[:-1])):
        if size == 1:
            continue
        if expected is None:
            row_stride = stride
        elif stride != expected:
            return None
        expected = stride * size
    return row_stride


def _run_in_parallel(function: Callable[..., Any], n: int, arguments: list, pointers: tuple[bool, ...],
                     itemsize: int) -> None:
    """Run the kernel on n contiguous elements split in chunks, one per intra-op thread (the calling thread takes
    the first chunk); the C function releases the GIL, so the chunks run at the same time."""
    threads = torch.get_num_threads()
    chunk = -(-n // max(threads, 1))
    chunk = -(-chunk // _CHUNK_ALIGNMENT) * _CHUNK_ALIGNMENT

    def run(start: int) -> None:
        shifted = [a + start * itemsize if pointer else a for a, pointer in zip(arguments, pointers)]
        function(1, min(chunk, n - start), *shifted)

    futures = [_chunk_pool().submit(run, start) for start in range(chunk, n, chunk)]
    run(0)
    for future in futures:
        future.result()


@functools.cache
def _chunk_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=max(os.cpu_count() or 1, 1), thread_name_prefix="tsjit-kernel")


os.register_at_fork(after_in_child=_chunk_pool.cache_clear)  # a forked child (a DataLoader worker) has no threads
