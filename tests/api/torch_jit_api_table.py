"""Every public name of torch.jit (`dir(torch.jit)` without leading underscore, plus `torch.jit.__all__` and the
public submodules, imported or not) and
tsjit's status for it: present (with the tests that check it behaves as torch.jit's), or missing with the
reason. `python tests/api/torch_jit_api_table.py` writes docs/torch_jit_api.md; test_api_table.py fails when a
torch.jit name is neither in tsjit nor listed here with a reason.
"""

from __future__ import annotations

import importlib.util
import pkgutil
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "docs" / "torch_jit_api.md"
sys.path.insert(0, str(ROOT))  # run as a script, it must see this tree's tsjit, not an installed one
import tsjit  # noqa: E402

# names torch/jit/__init__.py binds for its own use: Python helpers and modules, not API
NOT_API = {
    "Iterator": "typing.Iterator, imported by torch/jit/__init__.py for its own annotations",
    "annotations": "the `from __future__ import annotations` feature flag of torch/jit/__init__.py, and the module "
                   "torch.jit.annotations, the type-annotation helpers torch.jit's frontend uses (tsjit's: "
                   "frontend/script_type_parser.py)",
    "contextmanager": "contextlib.contextmanager, imported by torch/jit/__init__.py",
    "set_module": "torch.utils.set_module, which torch/jit/__init__.py uses to rename its classes' modules",
    "torch": "the torch package itself, imported by torch/jit/__init__.py",
    "warnings": "the warnings module, imported by torch/jit/__init__.py",
}

# torch.jit names tsjit does not have, and why
MISSING = {
    "ONNXTracedModule": "the tracer behind torch.onnx's export (torch.onnx calls it, not users); tsjit lowers to "
                        "MLIR instead of ONNX",
    "RecursiveScriptClass": "the Python face of a script-class object returned from script code; tsjit returns "
                            "such objects to Python as instances of the Python class, with their attributes",
    "enable_onednn_fusion": "oneDNN Graph (LLGA) fusion is a C++ backend of torch.jit; tsjit's one fuser is its C "
                            "kernel generator, switched by tsjit.fuser",
    "onednn_fusion_enabled": "as enable_onednn_fusion: tsjit has no oneDNN Graph fuser",
    "jit_module_from_flatbuffer": "the mobile (lite interpreter) flatbuffer format; tsjit reads and writes "
                                  "TorchScript zip archives only",
    "save_jit_module_to_flatbuffer": "as jit_module_from_flatbuffer: no mobile flatbuffer format",
    # submodules
    "generate_bytecode": "the module writing the mobile (lite interpreter) upgraders' bytecode: no mobile format",
    "mobile": "the module of the lite interpreter (LiteScriptModule, _load_for_lite_interpreter): no mobile format",
    "quantized": "the module of torch.jit's old quantized RNN and linear wrappers, all of which raise \"no longer "
                 "supported\" in PyTorch 2 (torch.ao.nn.quantized.dynamic replaces them)",
    "supported_ops": "the module that writes PyTorch's documentation page of TorchScript builtins; tsjit's operator "
                     "table is ops/registry.py",
    "unsupported_tensor_ops": "the module that writes PyTorch's documentation page of Tensor methods script does "
                              "not support",
}

# where each present name is checked against torch.jit (tests/...), and what differs
_API_TESTS = "api/test_torch_jit_api.py"
CHECKED = {
    "Attribute": _API_TESTS,
    "CompilationUnit": f"{_API_TESTS}, frontend/test_ir_emitter.py",
    "Error": f"{_API_TESTS} (tsjit.Error is RuntimeTsjitError, what failing script code raises)",
    "Final": "frontend/test_modules.py, api/test_freeze.py (typing.Final, as torch.jit.Final is)",
    "Future": f"{_API_TESTS}, runtime/test_fork_wait.py (a torch.futures.Future subclass)",
    "RecursiveScriptModule": "frontend/test_modules_api.py, frontend/test_interfaces.py",
    "ScriptFunction": f"{_API_TESTS} (save, save_to_buffer, graph_for), api/test_calling.py",
    "ScriptModule": f"{_API_TESTS} (legacy subclassing, save, save_to_buffer, code_with_constants, graph_for, "
                    "define)",
    "ScriptWarning": _API_TESTS,
    "TopLevelTracedModule": f"{_API_TESTS} (also a RecursiveScriptModule, which torch.jit's is not)",
    "TracedModule": f"{_API_TESTS} (also a RecursiveScriptModule, which torch.jit's is not)",
    "TracerWarning": "frontend/test_tracer_warnings.py",
    "TracingCheckError": "frontend/test_tracer_warnings.py",
    "annotate": "frontend/test_ir_emitter.py, ops/test_builtins.py",
    "export": f"frontend/test_modules.py, {_API_TESTS}",
    "export_opnames": _API_TESTS,
    "fork": f"{_API_TESTS} (`then`), runtime/test_fork_wait.py, frontend/test_fork_closures.py (a failed fork "
            "raises at `wait`; torch.jit's Python-level fork runs a script function at once and raises there)",
    "freeze": "api/test_freeze.py",
    "frontend": "the package tsjit.frontend (Python source to graphs); python_ast.py is torch.jit.frontend's "
                "counterpart",
    "fuser": f"{_API_TESTS} (fuser0/1/3 turn tsjit's fuser on, fuser2 and none off)",
    "ignore": "frontend/test_modules.py, frontend/test_class_properties.py",
    "interface": "frontend/test_interfaces.py",
    "is_scripting": _API_TESTS,
    "is_tracing": f"{_API_TESTS}, frontend/test_library_packages.py",
    "isinstance": _API_TESTS,
    "load": "serialization/test_archives.py",
    "optimize_for_inference": "api/test_freeze.py",
    "optimized_execution": f"{_API_TESTS} (read on each call without an optimized plan, as torch.jit)",
    "run_frozen_optimizations": _API_TESTS,
    "save": "serialization/test_archives.py",
    "script": f"frontend/, e2e/, {_API_TESTS} (example_inputs: types without MonkeyType)",
    "script_if_tracing": f"{_API_TESTS}, frontend/test_library_packages.py",
    "script_method": _API_TESTS,
    "strict_fusion": f"{_API_TESTS}, passes/test_check_strict_fusion.py",
    "trace": "frontend/test_tracer.py, e2e/",
    "trace_module": "frontend/test_tracer_modules.py",
    "unused": "frontend/test_modules.py",
    # the profiling executor's
    "last_executed_optimized_graph": "runtime/test_profiling_executor.py",
    "set_fusion_strategy": "runtime/test_profiling_executor.py",
    "wait": "runtime/test_fork_wait.py, frontend/test_tracer_fork.py",
}


def torch_jit_public_names() -> list[str]:
    jit = torch.jit
    submodules = {module.name for module in pkgutil.iter_modules(jit.__path__)}
    return sorted({name for name in set(dir(jit)) | submodules if not name.startswith("_")} | set(jit.__all__))


def in_tsjit(name: str) -> bool:
    """Whether tsjit has the name: an attribute (loaded on first use) or a subpackage."""
    return hasattr(tsjit, name) or importlib.util.find_spec(f"tsjit.{name}") is not None


def status(name: str) -> tuple[str, str]:
    """(status, note) of one torch.jit name; ("unaccounted", "") when neither present nor listed."""
    if name in NOT_API:  # first: `annotations`, say, is also bound in tsjit/__init__.py
        return "not API", NOT_API[name]
    if in_tsjit(name):
        return "present", CHECKED.get(name, "")
    if name in MISSING:
        return "missing", MISSING[name]
    return "unaccounted", ""


def table() -> str:
    names = torch_jit_public_names()
    rows = [f"| `{name}` | {'yes' if name in torch.jit.__all__ else ''} | {state} | {note} |"
            for name in names for state, note in [status(name)]]
    counts = {state: sum(status(name)[0] == state for name in names) for state in ("present", "missing", "not API")}
    return "\n".join([
        f"# torch.jit's public names in tsjit (PyTorch {torch.__version__.split('+')[0]})",
        "",
        "Generated by `python tests/api/torch_jit_api_table.py`; tests/api/test_api_table.py checks that every name",
        "is present or has a reason. \"In `__all__`\" marks the names torch.jit exports; the others are what",
        "`dir(torch.jit)` shows without a leading underscore, and torch.jit's public submodules (imported or not).",
        "Present names are checked against torch.jit in the tests named (under tests/).",
        "",
        f"{len(names)} names: {counts['present']} present, {counts['missing']} missing with a reason, "
        f"{counts['not API']} not API.",
        "",
        "| name | in `__all__` | tsjit | checked in / reason |",
        "| --- | --- | --- | --- |",
        *rows,
        "",
    ])


if __name__ == "__main__":
    DOCUMENT.parent.mkdir(exist_ok=True)
    DOCUMENT.write_text(table())
    sys.stdout.write(f"wrote {DOCUMENT}\n")
