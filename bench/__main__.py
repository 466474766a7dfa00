"""`python -m bench`: time tsjit, eager PyTorch, torch.compile and torch.jit side by side; print tables of ratios.

Each benchmark warms every variant up (torch.jit's and tsjit's executors optimize on their second and third
calls, and tsjit's kernels compile in the background meanwhile), then runs the variants in many short interleaved
rounds, in an order that rotates each round, and reports each variant's median round, so that the load from other
processes, which changes within seconds, hits all variants alike (a variant's fastest round tells more about when
it ran than about the variant). Numbers are for reading, never for asserting.

- chain100: 100 elementwise ops (unary, and binary with a second input) on 4-element tensors. Almost all of
  the time is per-op overhead, which fusion removes. Target: tsjit at most 0.2x eager.
- fork4: four calls of a matmul-heavy function (ten 256x256 matmuls each, on four different inputs), forked
  and waited for, against the same four calls made one after another. Intra-op threads are set to 1, so the
  only parallelism is fork's. Target: forked at most 0.75x serial on 2 cores. torch.compile has no fork; it
  runs the serial calls.
- lstm: the seeds' LSTM cell (batch 3, 10 inputs, 20 hidden) from Python source. "tsjit script" is the scripted
  function users call; "tsjit" and "tsjit unoptimized" run its graph on Functions directly, with the executor's
  optimization pipeline on and off, so those two rows show what the pipeline gains.
- lstm1x64, pointwise, lstm32: what a call costs on small tensors, through the scripted function users call
  ("tsjit script": binding, plan entry, generated plan). lstm1x64 is the cell at batch 1, 64 inputs, 64 hidden;
  pointwise five elementwise ops on 8 elements (targets: at most 1.0x eager); lstm32 a scripted loop calling the
  cell over 32 time steps (target: at most torch.jit's time).
- mlp: Linear/BatchNorm1d/ReLU twice (batch 16, 32-64-32 features), scripted as modules, eval mode:
  BatchNorm1d's `input.dim()` checks are what the pipeline removes (the tsjit rows as in lstm).
- encoder: nn.TransformerEncoderLayer in eval mode; with the masks None, the pipeline removes the checks and
  branches on them (about half the nodes).

- train_lstm_cell, train_lstm32, train_mlp (`--only train` runs the three): a training step, forward and
  backward with the parameters' gradients reset, of the LSTM cell (batch 1, 64 -> 64), the 32-step LSTM loop and
  a three-layer MLP (batch 16, 32-64-64-10), parameters requiring grad. tsjit's plan puts the ops with gradient
  formulas into DifferentiableGraphs: a fused forward graph and a backward graph run by autograd. Targets: at
  most 0.8x eager on the LSTM ones, at most torch.jit's time on all three.

- first_call: scripting plus the first result in a fresh process, tsjit against torch.jit (bench/first_call.py).
- plan_cache: `python -m bench.plan_cache`, memory growth over 10,000 calls whose inputs change among 100 specs,
  eager against tsjit in fresh processes (bench/plan_cache.py).
- load_long: `python -m bench.load_long [N ...]`, loading (tsjit.load) and scripting methods of 1,000 to 20,000
  statements in fresh processes, with the time per statement (flat when loading is linear; bench/load_long.py).

torch.compile compiles with inductor on first call, which takes tens of seconds on 2 cores (not timed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import timeit
from collections.abc import Callable

import torch

from bench import programs
from bench.first_call import bench_first_call
from tsjit.runtime.fusion import wait_for_kernels

TIMER: list[Callable[[], float]] = [time.perf_counter]  # --cpu-time: time.process_time (not for fork4)


SLICES = 5  # each round of `number` calls is timed as this many short rounds
WARMUP_CALLS = 3  # before timing: torch.jit's profiling executor optimizes on the third call, tsjit's on the second


def median_time(variants: dict[str, Callable[[], object]], number: int, rounds: int) -> dict[str, float]:
    """Seconds per call of each variant: the median of `rounds * SLICES` interleaved short rounds of about
    `number / SLICES` calls each, the variants' order rotated every round (none always runs after the same one)."""
    calls = max(1, round(number / SLICES))
    names = list(variants)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for k in range(rounds * SLICES):
        for name in names[k % len(names):] + names[:k % len(names)]:
            samples[name].append(timeit.Timer(variants[name], timer=TIMER[0]).timeit(number=calls) / calls)
    return {name: statistics.median(samples[name]) for name in names}


def report(title: str, times: dict[str, float], baseline: str) -> None:
    print(f"\n{title}")
    print(f"  {'variant':<24} {'time':>12} {'ratio to ' + baseline:>18}")
    for name, seconds in times.items():
        print(f"  {name:<24} {seconds * 1e6:>10.1f}us {seconds / times[baseline]:>18.3f}")


SKIPPED_VARIANTS: set[str] = set()  # --no-compile adds "torch.compile" (inductor compiles for tens of seconds)


def selected(variants: dict[str, Callable]) -> dict[str, Callable]:
    return {name: run for name, run in variants.items() if not any(s in name for s in SKIPPED_VARIANTS)}


def bench_chain(rounds: int) -> None:
    torch.manual_seed(0)
    bench_variants("chain100: 100 elementwise ops on 4-element tensors (target: tsjit <= 0.2x eager)",
                   programs.chain_variants(), (torch.randn(4), torch.randn(4)), 200, rounds)


def bench_fork(rounds: int) -> None:
    inputs, b = [torch.randn(256, 256) / 16 for _ in range(4)], torch.randn(256, 256) / 16
    variants = selected(programs.fork_variants())
    expected = variants["eager serial"](*inputs, b=b)
    for run in variants.values():
        torch.testing.assert_close(run(*inputs, b=b), expected)
    times = median_time({name: (lambda run=run: run(*inputs, b=b)) for name, run in variants.items()}, number=3,
                      rounds=rounds)
    report("fork4: 4 matmul-heavy calls, forked vs serial, 1 intra-op thread (target: forked <= 0.75x serial)",
           times, "tsjit serial")


def bench_variants(title: str, variants: dict[str, Callable], args: tuple, number: int, rounds: int,
                   tolerance: dict[str, float] | None = None) -> None:
    """Check every variant against eager (`tolerance`: assert_close's rtol and atol, if not its defaults), then
    time them in the steady state: after WARMUP_CALLS more calls, once the fused kernels that the optimized plans
    started compiling in the background are ready (with a cold kernel cache, the rounds would otherwise time the
    interpreted fallback that runs meanwhile), and checked again on those kernels."""
    variants = selected(variants)
    expected = variants["eager"](*args)
    for run in variants.values():
        torch.testing.assert_close(run(*args), expected, **(tolerance or {}))
        for _ in range(WARMUP_CALLS):
            run(*args)
    wait_for_kernels()
    for run in variants.values():
        torch.testing.assert_close(run(*args), expected, **(tolerance or {}))
    times = median_time({name: (lambda run=run: run(*args)) for name, run in variants.items()}, number=number,
                      rounds=rounds)
    report(title, times, "eager")


def bench_lstm(rounds: int) -> None:
    torch.manual_seed(0)
    batch, features, hidden = 3, 10, 20  # the seeds' sizes: per-op overhead, not matmuls, dominates
    args = (torch.randn(batch, features), torch.randn(batch, hidden), torch.randn(batch, hidden),
            torch.randn(4 * hidden, features), torch.randn(4 * hidden, hidden), torch.randn(4 * hidden),
            torch.randn(4 * hidden))
    bench_variants("lstm: the seeds' LSTM cell, batch 3, 10 -> 20", programs.lstm_variants(), args, 500, rounds)


def lstm_arguments(batch: int, features: int, hidden: int, steps: int | None = None) -> tuple:
    torch.manual_seed(0)
    x = torch.randn(batch, features) if steps is None else torch.randn(steps, batch, features)
    return (x, torch.randn(batch, hidden), torch.randn(batch, hidden), torch.randn(4 * hidden, features),
            torch.randn(4 * hidden, hidden), torch.randn(4 * hidden), torch.randn(4 * hidden))


def bench_lstm_1x64(rounds: int) -> None:
    bench_variants("lstm cell 1x64: batch 1, 64 -> 64 (target: tsjit script <= 1.0x eager)",
                   programs.script_variants(programs.lstm_cell), lstm_arguments(1, 64, 64), 500, rounds)


def bench_pointwise(rounds: int) -> None:
    torch.manual_seed(0)
    bench_variants("pointwise on 8 elements: 5 elementwise ops (target: tsjit script <= 1.0x eager)",
                   programs.script_variants(programs.pointwise), (torch.randn(8), torch.randn(8)), 1000, rounds)


def bench_lstm_steps(rounds: int) -> None:
    bench_variants("lstm over 32 steps: a scripted loop calling the cell, batch 1, 64 -> 64 "
                   "(target: tsjit script <= torch.jit)", programs.script_variants(programs.lstm_steps),
                   lstm_arguments(1, 64, 64, steps=32), 30, rounds)


def bench_mlp(rounds: int) -> None:
    torch.manual_seed(0)
    bench_variants("mlp: (Linear, BatchNorm1d, ReLU) x 2 modules, batch 16",
                   programs.module_variants(programs.mlp_module), (torch.randn(16, 32),), 200, rounds)


def bench_encoder(rounds: int) -> None:
    torch.manual_seed(0)
    bench_variants("encoder: nn.TransformerEncoderLayer(16, 2, 32), eval, sequence 5, batch 3",
                   programs.module_variants(programs.encoder_module), (torch.randn(5, 3, 16),), 100, rounds)


# float32 gradients through 32 recurrent steps: fused kernels round differently from eager's, by ~1e-4 at most
TRAINING_TOLERANCE = {"rtol": 1e-3, "atol": 1e-4}


def _training_lstm(steps: int | None) -> tuple[dict, tuple]:
    x, hx, cx, *parameters = lstm_arguments(1, 64, 64, steps)
    parameters = tuple(p.requires_grad_() for p in parameters)
    function = programs.lstm_cell if steps is None else programs.lstm_steps
    return programs.training_variants(function, parameters, 3), (x, hx, cx)


def bench_train_lstm_cell(rounds: int) -> None:
    variants, args = _training_lstm(None)
    bench_variants("train_lstm_cell: forward + backward of the cell, batch 1, 64 -> 64 (target: tsjit script <= "
                   "0.8x eager, <= torch.jit)", variants, args, 300, rounds)


def bench_train_lstm32(rounds: int) -> None:
    variants, args = _training_lstm(32)
    bench_variants("train_lstm32: forward + backward over 32 steps, batch 1, 64 -> 64 (target: tsjit script <= "
                   "0.8x eager, <= torch.jit)", variants, args, 10, rounds, TRAINING_TOLERANCE)


def bench_train_mlp(rounds: int) -> None:
    torch.manual_seed(0)
    sizes = [(64, 32), (64, 64), (10, 64)]
    parameters = tuple(t.requires_grad_() for out, inp in sizes for t in (torch.randn(out, inp) / 8, torch.randn(out)))
    bench_variants("train_mlp: forward + backward of Linear/ReLU x 2 + Linear, batch 16, 32-64-64-10 (target: "
                   "tsjit script <= torch.jit)", programs.training_variants(programs.mlp_function, parameters, 1),
                   (torch.randn(16, 32),), 200, rounds)


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """Run the benchmarks `argv` selects (default: sys.argv[1:]); `tsjit bench` passes its arguments on."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15,
                        help=f"interleaved rounds per benchmark (each timed as {SLICES} short ones)")
    benchmarks = {"chain": bench_chain, "lstm": bench_lstm, "lstm1x64": bench_lstm_1x64, "pointwise": bench_pointwise,
                  "lstm32": bench_lstm_steps, "mlp": bench_mlp, "encoder": bench_encoder, "fork": bench_fork,
                  "first_call": bench_first_call, "train_lstm_cell": bench_train_lstm_cell,
                  "train_lstm32": bench_train_lstm32, "train_mlp": bench_train_mlp}
    parser.add_argument("--only", choices=[*benchmarks, "train"], help="run one benchmark (train: the three train_*)")
    parser.add_argument("--no-compile", action="store_true", help="leave out torch.compile (slow to compile)")
    parser.add_argument("--threads", type=int, help="torch.set_num_threads (less noise on a busy machine)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time the process's CPU time, not wall time (steadier while other processes run)")
    options = parser.parse_args(argv)
    rounds = options.rounds
    if options.cpu_time:
        TIMER[0] = time.process_time
    if options.threads:
        torch.set_num_threads(options.threads)
    if options.no_compile:
        SKIPPED_VARIANTS.add("torch.compile")
    print(f"torch {torch.__version__}, {os.cpu_count()} cores, {torch.get_num_interop_threads()} inter-op threads, "
          f"load average {os.getloadavg()[0]:.1f} (other processes make every number noisier)")
    for name, run in benchmarks.items():
        if options.only in (None, name) or (options.only == "train" and name.startswith("train_")):
            if name == "fork":
                torch.set_num_threads(1)  # fork's is the only parallelism
                TIMER[0] = time.perf_counter  # forks gain wall time, not CPU time
            run(rounds)


if __name__ == "__main__":
    main()
