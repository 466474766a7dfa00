"""Run a lowered module on the CPU with IREE: `tsjit.mlir.iree.compile(lowered)` returns a callable.

    run = tsjit.mlir.iree.compile(tsjit.mlir.compile(graph, [x, 3], output_type="linalg-on-tensors"))
    y = run(x, 3)

IREE reads the module in MLIR's generic form, since its MLIR may spell some ops' custom syntax differently
from torch-mlir's (TOSA's `tosa.const_shape` does), and with the input type of the backend: `torch` for the torch
backend contract, `tosa`, `stablehlo`, or `tm_tensor` for linalg-on-tensors (whose modules hold torch-mlir's
TMTensor ops beside linalg: cumsum's `tm_tensor.scan`, scatter, sort, which IREE's `none` input rejects).
f64 stays f64 (IREE demotes it to f32 by default, which would change results).

Calls take and return torch tensors. Tuple arguments are passed flat, as the program was compiled (see
tsjit.mlir.prepare.flatten_tuple_inputs); a tuple result, which the backend returns as several results, comes
back as a tuple. Results are zero-copy: IREE maps the CPU buffer and torch wraps the mapping. Arguments are
copied into IREE's buffers, because its Python binding gives no way to import host memory.

Compiled artifacts (VM flatbuffers) are cached by a hash of the MLIR text, the input type, the flags and the IREE
version: in memory, and on disk under $TSJIT_CACHE_DIR (default ~/.cache/tsjit/iree). Each of the two is bounded by
TSJIT_IREE_CACHE_MB megabytes (default 256): past it, the least recently used artifacts go (on disk: oldest
modification time first; reading an artifact touches it), logged under TSJIT_LOG_LEVEL=iree. A program already
compiled keeps its own copy of its artifact, so eviction never breaks it; an evicted artifact needed again is
compiled again.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from collections.abc import Iterator, Sequence

import numpy
import torch

from tsjit import log, progress
from tsjit.codegen import compiler as kernel_compiler
from tsjit.errors import MLIRError
from tsjit.ir import types as ts
from tsjit.lru import LRUCache
from tsjit.mlir.pipelines import LoweredModule

_INPUT_TYPES = {"torch": "torch", "linalg-on-tensors": "tm_tensor", "tosa": "tosa", "stablehlo": "stablehlo"}
_FLAGS = ("--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false")
DEFAULT_CACHE_MB = 256


def cache_limit_bytes() -> int:
    """TSJIT_IREE_CACHE_MB in bytes (default 256 MB): the bound of the memory cache and of the disk cache each."""
    return kernel_compiler.cache_limit_bytes("TSJIT_IREE_CACHE_MB", DEFAULT_CACHE_MB)


_memory_cache: LRUCache[bytes] = LRUCache("iree", cache_limit_bytes, weight=len)


def compile(lowered: LoweredModule) -> CompiledProgram:
    """Compile for the CPU (llvm-cpu, local-task driver), or reuse a cached artifact of the same program."""
    return CompiledProgram(compile_cached(lowered.generic_text(), input_type(lowered.output_type)), lowered)


def input_type(output_type: str) -> str:
    """IREE's input type for a lowered module's output type (`tm_tensor` for linalg-on-tensors). With
    `compile_cached` and `CompiledProgram` it lets a caller compile in worker threads: iree-compile runs as a
    subprocess, so several compilations proceed in parallel."""
    return _INPUT_TYPES[output_type]


def compile_cached(text: str, input_type: str) -> bytes:
    """The VM flatbuffer of an MLIR module, from the cache when this exact compilation was done before."""
    key = _cache_key(text, input_type)
    found = _memory_cache.get(key) or _read_disk_cache(key)
    if found is None:
        found = _compile_with_iree(text, input_type)
        _write_disk_cache(key, found)
    _memory_cache.put(key, found)
    return found


def _cache_key(text: str, input_type: str) -> str:
    import iree.compiler.version as version  # deferred: optional and slow to import (the mlir extra)

    digest = hashlib.sha256()
    for part in (text, input_type, *_FLAGS, version.VERSION):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


# IREE's compilation phases (iree-compile --compile-to) a progress bar shows, each resuming where the last stopped.
# Off a terminal the module compiles in one go; the artifact is the same byte for byte, and on a terminal the
# phases cost about what one go does (a 12-conv net: 10.7 s in phases, 11.4 s in one go).
_PHASES = ("abi", "flow", "stream", "executable-targets", "end")


def _compile_with_iree(text: str, input_type: str) -> bytes:
    with progress.bar(f"IREE: compiling the {input_type} module for llvm-cpu", len(_PHASES), unit="phase") as bar:
        if not bar.shown:
            return _run_iree_compile(text, input_type, [])
        module = text.encode()
        for previous, phase in zip(("start", *_PHASES), _PHASES):
            bar.stage(phase)
            bytecode = [] if phase == "end" else ["--emit-mlir-bytecode"]
            module = _run_iree_compile(module, input_type, [f"--compile-from={previous}", f"--compile-to={phase}",
                                                            *bytecode])
        return module


def _run_iree_compile(module: str | bytes, input_type: str, phase_flags: list[str]) -> bytes:
    import iree.compiler as iree_compiler  # deferred: optional and slow to import (the mlir extra)

    try:
        return iree_compiler.compile_str(module, target_backends=["llvm-cpu"], input_type=input_type,
                                         extra_args=[*_FLAGS, *phase_flags])
    except iree_compiler.CompilerToolError as error:
        first = next((line.split("error:", 1)[1].strip() for line in str(error).splitlines() if "error:" in line), "")
        raise MLIRError(f"IREE could not compile the {input_type} module: {first}\n{error}") from None


def cache_dir() -> str:
    return os.environ.get("TSJIT_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "tsjit", "iree")


def _read_disk_cache(key: str) -> bytes | None:
    path = os.path.join(cache_dir(), key + ".vmfb")
    try:
        with open(path, "rb") as file:
            vmfb = file.read()
    except OSError:  # not cached, or evicted by another process just now
        return None
    kernel_compiler.touch(path)
    return vmfb


def _write_disk_cache(key: str, vmfb: bytes) -> None:
    """Write atomically (temporary file, then rename), so that parallel runs never read half a file."""
    os.makedirs(cache_dir(), exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=cache_dir(), delete=False) as file:
        file.write(vmfb)
    path = os.path.join(cache_dir(), key + ".vmfb")
    os.replace(file.name, path)
    removed = kernel_compiler.evict(cache_dir(), cache_limit_bytes(), keep=path, suffix=".vmfb")
    if removed:
        log.log(log.GRAPH_DUMP, f"disk cache over TSJIT_IREE_CACHE_MB: evicted {len(removed)} artifacts")


@functools.lru_cache(maxsize=1)
def _runtime_config():
    import iree.runtime as runtime  # deferred: optional and slow to import (the mlir extra)

    return runtime.Config("local-task")


class CompiledProgram:
    """A program loaded into its own IREE context; call it like the TorchScript function."""

    def __init__(self, vmfb: bytes, lowered: LoweredModule):
        import iree.runtime as runtime  # deferred: optional and slow to import (the mlir extra)

        self.vmfb = vmfb
        self.result_type = lowered.result_type
        self.input_types = lowered.input_types
        self.written_inputs = lowered.written_inputs
        self.list_lengths = lowered.list_lengths
        self._context = runtime.SystemContext(config=_runtime_config())
        self._context.add_vm_module(runtime.VmModule.copy_buffer(self._context.instance, vmfb))
        self._function = self._context.modules.module[lowered.entry]

    def __call__(self, *args):
        flat = _flatten(args)
        if len(flat) != len(self.input_types):
            raise MLIRError(f"the compiled program takes {len(self.input_types)} arguments (tuples flattened), "
                            f"got {len(flat)}")
        try:
            results = self._function(*[_to_iree(a) for a in flat])
        except (RuntimeError, ValueError) as error:  # a failed assert (cf.assert), inputs of other static sizes
            raise MLIRError(f"IREE: {error}") from None
        if self.written_inputs:
            results = self._copy_back(flat, results)
        return _to_torch(results, self.result_type, self.list_lengths)

    def _copy_back(self, flat: list, results):
        """Copy the new values of the arguments the program writes (returned last) into the caller's tensors,
        as eager would have written them; the program's own results."""
        results = results if isinstance(results, tuple | list) else (results,)
        count = len(self.written_inputs)
        for index, value in zip(self.written_inputs, results[-count:]):
            new = _element_to_torch(value, self.input_types[index])
            with torch.no_grad():
                if new.shape != flat[index].shape:  # (resize_as_ gave the argument other sizes, as eager's does)
                    flat[index].resize_(new.shape)
                flat[index].copy_(new)
        return tuple(results[:-count])


def _flatten(args: Sequence) -> list:
    """Tuples, and lists of tensors or numbers, as their elements (tsjit.mlir.prepare flattened those arguments)."""
    flat = []
    for arg in args:
        flat.extend(_flatten(arg) if isinstance(arg, tuple) or _is_flat_list(arg) else [arg])
    return flat


def _is_flat_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, torch.Tensor | int | float) for v in value)


def _to_iree(value):
    if not isinstance(value, torch.Tensor):
        return int(value) if isinstance(value, bool) else value
    array = value.detach().cpu().contiguous()
    if array.dtype == torch.bfloat16:
        import ml_dtypes  # deferred: optional and slow to import (the mlir extra)

        return array.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return array.numpy()


def _to_torch(results, result_type: ts.Type, list_lengths: Sequence[int] = ()):
    """IREE's results in the shape of the TorchScript result: a tuple result, nested tuples included, was
    returned as its leaves, and so were its lists (of `list_lengths`; tsjit.mlir.prepare.unpack_list_result)."""
    if isinstance(result_type, ts.NoneType):
        return None
    leaves = iter(results if isinstance(results, tuple | list) else (results,))
    return _nest(leaves, result_type, iter(list_lengths))


def _nest(leaves: Iterator, type_: ts.Type, lengths: Iterator[int]):
    if isinstance(type_, ts.TupleType):
        return tuple(_nest(leaves, t, lengths) for t in type_.elements)
    if isinstance(type_, ts.ListType):
        count = next(lengths, None)
        elements = list(leaves) if count is None else [next(leaves) for _ in range(count)]
        return [_element_to_torch(e, type_.elem) for e in elements]
    return _element_to_torch(next(leaves), type_)


def _element_to_torch(result, type_: ts.Type):
    if isinstance(type_, ts.BoolType):
        return bool(result)
    if isinstance(type_, ts.IntType | ts.FloatType) or not hasattr(result, "to_host"):
        return result
    array = result.to_host()
    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.view(numpy.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)
