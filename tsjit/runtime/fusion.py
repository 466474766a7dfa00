"""Running prim::FusionGroup: a compiled kernel behind a guard on the actual inputs, else the subgraph.

(seed: jit-overview.md "Post-derivative optimization": the Operation of a FusionGroup node generates a kernel
for its subgraph; TorchScript's fusers guard a kernel with a check of the inputs and keep a fallback graph for
when it fails.) The kernel's C source is generated when the plan's Code is built. Its compilation stays off the
critical path: a kernel found in the disk cache is loaded on the first call, any other one is compiled on a
background thread while the calls interpret the subgraph, and replaces it when ready (TSJIT_SYNC_COMPILE=1: the
first call compiles and waits, as tests checking that the kernel runs want). The guard:

- every tensor input is a strided CPU tensor (torch.Tensor or nn.Parameter) of the dtype the plan was specialized
  to, and, while grad mode is on, none of them requires grad (kernels have no backward);
- their shapes and strides suit the kernel (tsjit.codegen.launch: broadcastable shapes, evenly divided chunks,
  eager's results contiguous); what the launch planner says is kept per shapes and strides, so that a call only
  pays for a dictionary lookup.

Then fresh contiguous outputs are allocated and the kernel fills them (from PARALLEL_MIN_ELEMENTS elements on,
split into element ranges on torch.get_num_threads() threads, as eager's intra-op parallelism would). Otherwise,
and when no kernel could be generated or compiled, the subgraph runs in the interpreter, which broadcasts,
promotes dtypes, records autograd and raises eager's errors, as the nodes did before fusion.

A fused group runs once per call of its plan, often in a loop (the LSTM's steps), so the common call (the guard
passes, the kernel is loaded, the layout's launch is known and runs on the calling thread) is generated as one
straight-line function per group (`_fast_path`), and only other calls take the general path.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import functools
import math
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import torch

from tsjit import log
from tsjit.codegen.c_kernel import (
    FLOAT_ARGUMENT,
    INT_ARGUMENT,
    KERNEL_NAME,
    Kernel,
    NotFusible,
    generate_kernel,
)
from tsjit.codegen.compiler import find_compiler, load_kernel
from tsjit.codegen.launch import Launch, LaunchPlanner
from tsjit.frontend.torch_tracing_flags import ORIGINAL_GET_TRACING_STATE, torch_jit_is_tracing
from tsjit.ir.graph import Graph, Node
from tsjit.ir.types import TensorType
from tsjit.runtime.interpreter import Code, InterpreterState
from tsjit.runtime.operations import Operation

_PLAIN_TENSOR_TYPES = frozenset({torch.Tensor, torch.nn.Parameter})
PARALLEL_MIN_ELEMENTS = 1 << 16  # from here on, kernels run in element ranges on torch.get_num_threads() threads
_RANGE_ALIGNMENT = 64  # ranges start at multiples of 64 elements: on cache-line boundaries for contiguous outputs
MAX_LAUNCHES = 256  # launches remembered per FusionGroup (shapes and strides); then forgotten and planned again
_C_ARGUMENT_TYPES = {INT_ARGUMENT: ctypes.c_int64, FLOAT_ARGUMENT: ctypes.c_double}
_NOT_PLANNED = object()
_pending: set[Future] = set()  # background compilations not finished yet


def fusion_group_operation(node: Node) -> Operation:
    """The Operation of a prim::FusionGroup node: its kernel when the inputs allow, else its subgraph."""
    subgraph = node.g("Subgraph")
    fallback = interpreted(subgraph)
    try:
        kernel = generate_kernel(subgraph)
        planner = LaunchPlanner(subgraph)
    except NotFusible as error:
        log.graph_update(f"interpreting a FusionGroup subgraph: {error}")
        return fallback
    return _guarded(kernel, _LazyKernel(kernel), planner, fallback, _profiled_layout(kernel, subgraph))


def interpreted(subgraph: Graph) -> Operation:
    """Run `subgraph` in the interpreter (the fallback of a FusionGroup). Its Code is built on the first run: with
    the kernel in the disk cache, most plans never need it."""
    codes: list[Code] = []

    def run(*values):
        if not codes:
            codes.append(Code(subgraph))  # two threads may both build one: either serves
        return InterpreterState(codes[0], values).run()

    return run


def wait_for_kernels(timeout: float | None = None) -> None:
    """Wait until the kernels compiling in the background are ready (or failed)."""
    concurrent.futures.wait(list(_pending), timeout)


class _LazyKernel:
    """The kernel's C function once loaded (`loaded`; `function` None when it cannot be built). `get` loads it
    from the cache, else starts compiling it on the background thread and returns None until that is done."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.lock = threading.Lock()
        self.loaded = False
        self.compiling = False
        self.function: Callable[..., Any] | None = None

    def get(self) -> Callable[..., Any] | None:
        with self.lock:
            if self.loaded or self.compiling:
                return self.function
            if find_compiler() is not None and os.environ.get("TSJIT_SYNC_COMPILE") != "1":
                function = load_kernel(self.kernel.source, KERNEL_NAME, compile=False)
                if function is None:
                    self.compiling = True
                    future = _compile_later(self.compile)
                    _pending.add(future)
                    future.add_done_callback(_pending.discard)
                    return None
                self.finish(function)
                return self.function
        self.compile()
        return self.function

    def compile(self) -> None:
        self.finish(load_kernel(self.kernel.source, KERNEL_NAME))

    def finish(self, function: Callable[..., Any] | None) -> None:
        if function is None:
            log.graph_update("no compiled kernel: interpreting the FusionGroup subgraph")
        else:
            arguments = [_C_ARGUMENT_TYPES.get(kind, ctypes.c_void_p) for kind in self.kernel.arguments]
            function.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p] + arguments + \
                [ctypes.c_void_p] * self.kernel.num_outputs
            function.restype = None
        self.function = function  # before `loaded`: a call that sees `loaded` sees the function
        self.loaded = True


def _guarded(kernel: Kernel, lazy: _LazyKernel, planner: LaunchPlanner, fallback: Operation,
             profiled: tuple | None = None) -> Operation:
    """The kernel's Operation. Its C function takes the element range [begin, end), the address of the launch's
    geometry (sizes, then every tensor input's strides, as an int64 array made once per launch), the subgraph's
    inputs (tensors as data pointers, scalars by value) and the output pointers.

    A call costs a few microseconds of Python (a FusionGroup of tiny ops only pays off if that is less than the
    ops it replaces), so everything that does not depend on the inputs is decided here, once, and the launch for
    each layout of the inputs (their shapes and strides) is planned once and remembered. One pass over the inputs
    checks them and collects their layout and the C arguments."""
    tensors = tuple(kind not in _C_ARGUMENT_TYPES for kind in kernel.arguments)
    dtype, count = kernel.dtype, kernel.num_outputs
    plain, is_grad_enabled, empty, cpu = _PLAIN_TENSOR_TYPES, torch.is_grad_enabled, torch.empty, torch.device("cpu")
    launches: dict[tuple, _Planned | None] = {}

    def plan(layout: tuple) -> _Planned | None:
        if len(launches) >= MAX_LAUNCHES:
            launches.clear()
        launch = planner(layout)
        planned = launches[layout] = (None if launch is None else
                                      _Planned(launch, _same_layout_input(launch, layout), kernel.concats))
        return planned

    if profiled is not None:
        plan(profiled)

    def operation(*values):
        if torch_jit_is_tracing():  # its tracer sees operators, not kernels
            return fallback(*values)
        grad = is_grad_enabled()
        layout, arguments = [], []
        for value, tensor in zip(values, tensors):
            if not tensor:
                arguments.append(value)
                continue
            if (type(value) not in plain or value.dtype is not dtype or not value.is_cpu
                    or (grad and value.requires_grad)):
                return fallback(*values)
            layout += (value.shape, value.stride())
            arguments.append(value.data_ptr())
        function = lazy.function if lazy.loaded else lazy.get()
        if function is None:
            return fallback(*values)
        key = tuple(layout)
        planned = launches.get(key, _NOT_PLANNED)
        if planned is _NOT_PLANNED:
            planned = plan(key)
        if planned is None:
            return fallback(*values)
        outputs = [empty(*sizes, dtype=dtype, device=cpu) for sizes in planned.output_sizes]
        numel = planned.numel
        if numel:
            arguments += [output.data_ptr() for output in outputs]
            if numel < PARALLEL_MIN_ELEMENTS:
                function(0, numel, planned.geometry, *arguments)
            else:
                _run_in_parallel(function, numel, [planned.geometry, *arguments])
        return outputs[0] if count == 1 else tuple(outputs)

    return _fast_path(tensors, count, dtype, lazy, launches, operation, kernel.concats)


def _fast_path(tensors: tuple[bool, ...], count: int, dtype: torch.dtype, lazy: _LazyKernel, launches: dict,
               slow: Operation, concats: tuple = ()) -> Operation:
    """The kernel's Operation for the common call, generated without loops: every input passes the guard, the
    kernel is loaded and the inputs' layout has a launch that runs on the calling thread; anything else goes to
    `slow`, which decides it as described in _guarded. For a group of a tensor and a scalar with one output:

        def fused(x0, x1):
            function = lazy.function
            if function is not None and torch_jit_tracing_state() is None:
                grad = is_grad_enabled()
                if type(x0) in plain and x0.dtype is dtype and x0.is_cpu and not (grad and x0.requires_grad):
                    planned = launches.get((x0.shape, x0.stride()))
                    if planned is not None and planned.serial:
                        like = planned.like
                        model = None if like is None else (x0,)[like]
                        o0 = empty(*planned.sizes, dtype=dtype, device=cpu) if model is None else empty_like(model)
                        function(0, planned.numel, planned.geometry, x0.data_ptr(), x1, o0.data_ptr())
                        return o0
            return slow(x0, x1)

    An output that concatenates (c_kernel.py) is allocated with its own sizes, `planned.output_sizes[k]`.
    (torch_jit_tracing_state is what torch_jit_is_tracing asks, called without that Python function.)
    """
    names = [f"x{k}" for k in range(len(tensors))]
    inputs = ", ".join(names)
    guard = " and ".join(f"type({x}) in plain and {x}.dtype is dtype and {x}.is_cpu and not (grad and "
                         f"{x}.requires_grad)" for x, tensor in zip(names, tensors) if tensor) or "True"
    layout = "".join(f"{x}.shape, {x}.stride(), " for x, tensor in zip(names, tensors) if tensor)
    tensor_inputs = "".join(f"{x}, " for x, tensor in zip(names, tensors) if tensor)
    outputs = [f"o{k}" for k in range(count)]
    arguments = [f"{x}.data_ptr()" if tensor else x for x, tensor in zip(names, tensors)]
    arguments += [f"{o}.data_ptr()" for o in outputs]
    source = "\n".join([
        f"def fused({inputs}):",
        "    function = lazy.function",
        "    if function is not None and torch_jit_tracing_state() is None:",
        "        grad = is_grad_enabled()",
        f"        if {guard}:",
        f"            planned = launches.get(({layout}))",
        "            if planned is not None and planned.serial:",
        "                like = planned.like",
        f"                model = None if like is None else ({tensor_inputs})[like]",
        *[f"                {o} = empty(*planned.output_sizes[{k}], dtype=dtype, device=cpu)"
          if k < len(concats) and concats[k] is not None else
          f"                {o} = empty(*planned.sizes, dtype=dtype, device=cpu) if model is None else "
          "empty_like(model)" for k, o in enumerate(outputs)],
        f"                function(0, planned.numel, planned.geometry, {', '.join(arguments)})",
        f"                return {', '.join(outputs)}",
        f"    return slow({inputs})"])
    namespace = {"lazy": lazy, "torch_jit_tracing_state": ORIGINAL_GET_TRACING_STATE,
                 "is_grad_enabled": torch.is_grad_enabled,
                 "plain": _PLAIN_TENSOR_TYPES, "dtype": dtype, "launches": launches, "empty": torch.empty,
                 "empty_like": torch.empty_like,
                 "cpu": torch.device("cpu"), "slow": slow}
    exec(compile(source, "<tsjit fused kernel call>", "exec"), namespace)
    return namespace["fused"]


def _same_layout_input(launch: Launch, layout: tuple) -> int | None:
    """The position among the tensor inputs of one whose shape is the outputs' and whose strides are contiguous
    (an empty_like of it is a fresh contiguous output), or None."""
    shape = tuple(launch.shape)
    contiguous = tuple(math.prod(shape[d + 1:]) for d in range(len(shape)))
    return next((k for k, (sizes, strides) in enumerate(zip(layout[0::2], layout[1::2]))
                 if tuple(sizes) == shape and tuple(strides) == contiguous), None)


def _profiled_layout(kernel: Kernel, subgraph: Graph) -> tuple | None:
    """The layout (shapes and strides) the subgraph's tensor inputs are typed with, when every one is known: the
    profiling executor's groups, specialized to the profiled sizes, get that launch planned with the kernel."""
    layout: list = []
    for value, kind in zip(subgraph.inputs, kernel.arguments):
        if kind in _C_ARGUMENT_TYPES:
            continue
        type_ = value.type
        if not isinstance(type_, TensorType) or not type_.is_complete():
            return None
        layout += (tuple(type_.sizes), tuple(type_.strides))
    return tuple(layout)


class _Planned:
    """A launch as the kernel's call takes it: the outputs' sizes as torch.empty's arguments (one by one, which it
    parses several times faster than one sequence), the element count, whether the calling thread runs all of it,
    the address of the geometry array, and which tensor input (if any) has the outputs' shape and contiguous
    strides, so that `torch.empty_like` of it allocates each output (it parses no sizes, dtype or device: half
    of torch.empty's time on small tensors); and each output's sizes, larger along its dim for an output that
    concatenates pieces of the outputs' shape (`concats`: the kernel's)."""

    __slots__ = ("sizes", "output_sizes", "numel", "serial", "geometry", "like", "_array")

    def __init__(self, launch: Launch, like: int | None = None, concats: tuple = ()):
        self.like = like
        self.sizes = tuple(launch.shape) or ((),)
        shape = tuple(launch.shape)
        self.output_sizes = [self.sizes if concat is None else
                             (*shape[:concat[0]], shape[concat[0]] * concat[1], *shape[concat[0] + 1:])
                             for concat in concats]
        self.numel = launch.numel
        self.serial = 0 < launch.numel < PARALLEL_MIN_ELEMENTS  # runs on the calling thread (_fast_path)
        self._array = (ctypes.c_int64 * len(launch.geometry))(*launch.geometry)  # kept alive with its address
        self.geometry = ctypes.addressof(self._array)


def _run_in_parallel(function: Callable[..., Any], numel: int, arguments: list) -> None:
    """Run the kernel on the elements [0, numel) split into one range per intra-op thread (the calling thread
    takes the first); the C function releases the GIL, so the ranges run at the same time."""
    threads = max(torch.get_num_threads(), 1)
    step = -(-numel // threads)
    step = -(-step // _RANGE_ALIGNMENT) * _RANGE_ALIGNMENT
    futures = [_range_pool().submit(function, begin, min(begin + step, numel), *arguments)
               for begin in range(step, numel, step)]
    function(0, min(step, numel), *arguments)
    for future in futures:
        future.result()


@functools.cache
def _range_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=max(os.cpu_count() or 1, 1), thread_name_prefix="tsjit-kernel")


def _compile_later(compile: Callable[[], None]) -> Future:
    """Queue a compilation for the background thread. That thread is a daemon (not a ThreadPoolExecutor's worker,
    which the interpreter joins at exit): a process that exits does not wait for kernels it will never run, and
    the compiler still running is killed (codegen/compiler.py)."""
    future: Future = Future()
    _compile_queue().put((compile, future))
    return future


@functools.cache
def _compile_queue() -> queue.SimpleQueue:
    """The queue of the one thread compiling kernels in the background (the compiler runs as a subprocess: the GIL
    stays free)."""
    jobs: queue.SimpleQueue = queue.SimpleQueue()
    threading.Thread(target=_compile_jobs, args=(jobs,), name="tsjit-compile", daemon=True).start()
    return jobs


def _compile_jobs(jobs: queue.SimpleQueue) -> None:
    while True:
        compile, future = jobs.get()
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(compile())
            except BaseException as error:  # handed to whoever waits on the future
                future.set_exception(error)


def _after_fork_in_child() -> None:  # a forked child (a DataLoader worker) has none of the parent's threads
    _range_pool.cache_clear()
    _compile_queue.cache_clear()
    _pending.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)
