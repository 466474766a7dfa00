"""The operators through which a TorchScript program reaches beyond its own values: files, other processes and
machines, process-wide state. `tsjit.load(f, trusted=False)` refuses archives whose code uses any of them.

The table was drawn from the dispatcher's schemas (torch 2.13: every `torch._C._jit_get_all_schemas()` name
that reads or writes a file, talks to another process or device group, or changes state every other thread
sees) and from the builtins tsjit adds itself (ops/builtins/environment.py's aten::save). Whole namespaces
of collective communication are refused, so that operators added to them later are refused too.

Not in the table, by decision: `print` and `warnings.warn` (prim::Print, aten::warn: output only, as from any
library the program calls), grad mode and autocast (thread-local), and operators registered at run time by
the program itself (`tsjit.register_operator`), which are the program's own code, not the archive's.
"""

from __future__ import annotations

OUTSIDE_WORLD_OPERATORS: dict[str, str] = {
    "aten::save": "writes a file",
    "aten::from_file": "reads a file",
    "debugprims::load_tensor": "reads a file",
    "prim::rpc_async": "calls another process",
    "prim::rpc_sync": "calls another process",
    "prim::rpc_remote": "calls another process",
    "aten::manual_seed": "reseeds the process-wide random number generator",
    "aten::seed": "reseeds a random number generator from the operating system",
    "aten::record_stream": "changes a device stream's allocator state",
    "aten::_pin_memory": "allocates page-locked host memory",
    "profiler::_record_function_enter": "starts process-wide profiler records",
    "profiler::_record_function_enter_new": "starts process-wide profiler records",
    "profiler::_record_function_exit": "ends process-wide profiler records",
    "profiler::_call_end_callbacks_on_jit_fut": "ends process-wide profiler records",
}

OUTSIDE_WORLD_NAMESPACES: dict[str, str] = {
    "c10d": "communicates with other processes",
    "_c10d_functional": "communicates with other processes",
    "_c10d_functional_autograd": "communicates with other processes",
    "symm_mem": "shares memory with other processes",
    "rpc": "calls another process",
}


def outside_world_effect(kind: str) -> str | None:
    """What an operator (`ns::name`) does beyond its values, or None if it stays inside the program."""
    found = OUTSIDE_WORLD_OPERATORS.get(kind)
    if found is not None:
        return found
    namespace = kind.partition("::")[0]
    return OUTSIDE_WORLD_NAMESPACES.get(namespace)
