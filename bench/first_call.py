"""First-call latency: scripting a program plus its first result, tsjit against torch.jit, each measured in a fresh
process (so nothing is cached or imported yet but torch and the compiler itself).

- chain10, chain100: 10 and 100 elementwise ops from Python source (bench/programs.py's chain).
- lstm: the seeds' LSTM cell; mlp: Linear/BatchNorm1d/ReLU twice; encoder: nn.TransformerEncoderLayer (eval).
- warm chain10: the 10-op chain in a process that has already scripted and run the LSTM cell (what a test
  suite that scripts many programs sees). Target: under 100 ms.

Target: tsjit's first call at most 2x torch.jit's on every workload. Each number is the fastest of `--rounds`
fresh processes (at most 3), as wall-clock time and as the process's CPU time (which waiting for a CPU on a
loaded machine does not inflate); the import of tsjit (torch already imported; torch.jit comes with torch) is
shown apart. `python -m bench --only first_call`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import torch


def _programs() -> Any:
    """bench.programs, imported on use: it imports parts of tsjit, which the child process times apart."""
    from bench import programs

    return programs


def _function_from_source(compiler: Any, source: str, name: str) -> Callable:
    return getattr(compiler.CompilationUnit(source), name)


def _chain(length: int) -> tuple[Callable, Callable]:
    return (lambda compiler: _function_from_source(compiler, _programs().chain_source(length), "chain"),
            lambda: (torch.randn(4), torch.randn(4)))


def _lstm_inputs() -> tuple:
    batch, features, hidden = 3, 10, 20
    return (torch.randn(batch, features), torch.randn(batch, hidden), torch.randn(batch, hidden),
            torch.randn(4 * hidden, features), torch.randn(4 * hidden, hidden), torch.randn(4 * hidden),
            torch.randn(4 * hidden))


def _module(build: Callable[[], torch.nn.Module], *shape: int) -> tuple[Callable, Callable]:
    module = []  # built outside the timed part: constructing the nn.Module is not compiling it

    def inputs() -> tuple:
        module.append(build())
        return (torch.randn(*shape),)

    return (lambda compiler: compiler.script(module[-1]), inputs)


# name -> (script: compiler -> callable, inputs: () -> argument tuple); inputs are made before scripting
WORKLOADS: dict[str, Callable[[], tuple[Callable, Callable]]] = {
    "chain10": lambda: _chain(10),
    "chain100": lambda: _chain(100),
    "lstm": lambda: ((lambda compiler: compiler.script(_programs().lstm_cell)), _lstm_inputs),
    "mlp": lambda: _module(lambda: _programs().mlp_module(), 16, 32),
    "encoder": lambda: _module(lambda: _programs().encoder_module(), 5, 3, 16),
}
WARM_UP = "lstm"  # what the "warm" measurement scripts and runs first


def compiler_named(name: str) -> Any:
    if name == "tsjit":
        import tsjit

        return tsjit
    return torch.jit


def first_call(compiler: Any, workload: str) -> tuple[float, float]:
    """Seconds (wall clock, and CPU time of this process) to script the workload and compute its first result."""
    script, make_inputs = WORKLOADS[workload]()
    inputs = make_inputs()
    start, start_cpu = time.perf_counter(), time.process_time()
    script(compiler)(*inputs)
    return time.perf_counter() - start, time.process_time() - start_cpu


def measure_in_this_process(compiler_name: str, workload: str, warm: bool) -> dict[str, float]:
    """The import of the compiler (with bench.programs, which imports parts of tsjit) and the first call."""
    start = time.process_time()
    compiler = compiler_named(compiler_name)
    _programs()
    imported = time.process_time() - start
    if warm:
        first_call(compiler, WARM_UP)
    wall, cpu = first_call(compiler, workload)
    return {"import_cpu": imported, "wall": wall, "cpu": cpu}


def measure(compiler_name: str, workload: str, warm: bool, rounds: int) -> dict[str, float]:
    """The fastest of `rounds` fresh processes (each number its own minimum)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    best: dict[str, float] = {}
    for _ in range(rounds):
        command = [sys.executable, "-m", "bench.first_call", compiler_name, workload, str(torch.get_num_threads())]
        command += ["--warm"] if warm else []
        output = subprocess.run(command, capture_output=True, text=True, check=True, env=env, cwd=root).stdout
        for key, seconds in json.loads(output.splitlines()[-1]).items():
            best[key] = min(best.get(key, seconds), seconds)
    return best


def bench_first_call(rounds: int) -> None:
    rounds = max(1, min(rounds, 3))
    print(f"\nfirst call: script + first result, fresh process each, fastest of {rounds} "
          "(targets: tsjit <= 2x torch.jit; warm chain10 < 100 ms)")
    print("  wall clock counts waiting for a CPU on a loaded machine; CPU time (of the process) does not")
    print(f"  {'workload':<14} {'torch.jit':>10} {'tsjit':>9} {'ratio':>6} | {'CPU: torch.jit':>14} {'tsjit':>9} "
          f"{'ratio':>6} | {'tsjit import CPU':>16}")
    cases = [(name, False) for name in WORKLOADS] + [("chain10", True)]
    for workload, warm in cases:
        reference = measure("torch.jit", workload, warm, rounds)
        ours = measure("tsjit", workload, warm, rounds)
        label = f"warm {workload}" if warm else workload
        print(f"  {label:<14} {reference['wall'] * 1e3:>8.1f}ms {ours['wall'] * 1e3:>7.1f}ms "
              f"{ours['wall'] / reference['wall']:>6.2f} | {reference['cpu'] * 1e3:>12.1f}ms "
              f"{ours['cpu'] * 1e3:>7.1f}ms {ours['cpu'] / reference['cpu']:>6.2f} | "
              f"{ours['import_cpu'] * 1e3:>14.1f}ms")


def main() -> None:
    """The child process: `python -m bench.first_call COMPILER WORKLOAD THREADS [--warm]` prints one JSON line;
    THREADS is the parent's torch thread count (`--threads`: idle OpenMP threads spinning on a loaded machine
    would be counted as the process's CPU time)."""
    compiler_name, workload, threads = sys.argv[1:4]
    torch.set_num_threads(int(threads))
    print(json.dumps(measure_in_this_process(compiler_name, workload, warm="--warm" in sys.argv[4:])))


if __name__ == "__main__":
    main()
