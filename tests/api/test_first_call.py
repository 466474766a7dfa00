"""What a first call costs: scripting and running the bench programs must not import torch._dynamo (seconds on
its own; most meta kernels import it on their first call, so shape propagation must get by on its rules)."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_SCRIPT_AND_RUN_THE_BENCH_PROGRAMS = """
import sys
import tsjit
from bench.first_call import WORKLOADS, first_call

for workload in WORKLOADS:
    first_call(tsjit, workload)
loaded = sorted(name for name in sys.modules if name.startswith("torch._dynamo"))
assert not loaded, f"scripting and running the bench programs imported {loaded[:5]}"
print("ran", len(WORKLOADS), "programs")
"""


def test_scripting_and_running_the_bench_programs_does_not_import_dynamo():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    result = subprocess.run([sys.executable, "-c", _SCRIPT_AND_RUN_THE_BENCH_PROGRAMS], capture_output=True,
                            text=True, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "ran 5 programs" in result.stdout


_SCRIPT_AND_RUN_A_FUNCTION = """
import sys
import torch
import tsjit
from bench.programs import chain_source

tsjit.CompilationUnit(chain_source(10)).chain(torch.randn(4), torch.randn(4))
frontends = {"tsjit.api.module", "tsjit.frontend.module_sugared_values", "tsjit.frontend.script_class",
             "tsjit.frontend.concrete_module_type"}
loaded = sorted(name for name in sys.modules if name in frontends)
assert not loaded, f"scripting and running a function imported the module or class frontend: {loaded}"
tables = sorted(name for name in sys.modules if name == "tsjit.ops.prim_ops" or name.startswith("tsjit.ops.builtins"))
assert not tables, f"a function of tensor operators loaded the JIT-only builtins: {tables}"
tsjit.script(torch.nn.Linear(2, 3))(torch.randn(1, 2))  # which scripting a module imports
print("ok")
"""


def test_scripting_a_function_imports_no_module_frontend():
    """A function's first call loads only what functions need: the module and class frontends (api/module.py,
    frontend/script_class.py and what they import) come with the first nn.Module or class scripted, and the
    tables of JIT-only builtins (ops/builtins, ops/prim_ops) with the first program that calls one."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    result = subprocess.run([sys.executable, "-c", _SCRIPT_AND_RUN_A_FUNCTION], capture_output=True, text=True,
                            env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"
