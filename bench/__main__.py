"""`python -m bench`: time tsjit, eager PyTorch, torch.compile and torch.jit side by side; print tables of ratios.

Each benchmark runs every variant in interleaved rounds and keeps each variant's fastest round, so that noise
from other processes hits all variants alike. Numbers are for reading, never for asserting.

- chain100: 100 elementwise ops (unary, and binary with a second input) on 4-element tensors. Almost all of
  the time is per-op overhead: this measures the interpreter. Target: tsjit at most 1.3x eager.
- fork4: four calls of a matmul-heavy function (ten 256x256 matmuls each, on four different inputs), forked
  and waited for, against the same four calls made one after another. Intra-op threads are set to 1, so the
  only parallelism is fork's. Target: forked at most 0.75x serial on 2 cores. torch.compile has no fork; it
  runs the serial calls.

torch.compile compiles with inductor on first call, which takes tens of seconds on 2 cores (not timed).
"""

from __future__ import annotations

import argparse
import os
import timeit
from collections.abc import Callable

import torch

from bench import programs


def best_time(variants: dict[str, Callable[[], object]], number: int, rounds: int) -> dict[str, float]:
    """Seconds per call of each variant: the fastest of `rounds` interleaved rounds of `number` calls."""
    best = {name: float("inf") for name in variants}
    for _ in range(rounds):
        for name, run in variants.items():
            best[name] = min(best[name], timeit.timeit(run, number=number) / number)
    return best


def report(title: str, times: dict[str, float], baseline: str) -> None:
    print(f"\n{title}")
    print(f"  {'variant':<24} {'time':>12} {'ratio to ' + baseline:>18}")
    for name, seconds in times.items():
        print(f"  {name:<24} {seconds * 1e6:>10.1f}us {seconds / times[baseline]:>18.3f}")


def bench_chain(rounds: int) -> None:
    x, y = torch.randn(4), torch.randn(4)
    eager, compiled, scripted, function = programs.chain_variants()
    for run in (eager, compiled, scripted, function):
        torch.testing.assert_close(run(x, y), eager(x, y))
    times = best_time({"eager": lambda: eager(x, y), "torch.compile": lambda: compiled(x, y),
                       "torch.jit": lambda: scripted(x, y), "tsjit": lambda: function(x, y)},
                      number=200, rounds=rounds)
    report("chain100: 100 elementwise ops on 4-element tensors (target: tsjit <= 1.3x eager)", times, "eager")


def bench_fork(rounds: int) -> None:
    inputs, b = [torch.randn(256, 256) / 16 for _ in range(4)], torch.randn(256, 256) / 16
    variants = programs.fork_variants()
    expected = variants["eager serial"](*inputs, b=b)
    for run in variants.values():
        torch.testing.assert_close(run(*inputs, b=b), expected)
    times = best_time({name: (lambda run=run: run(*inputs, b=b)) for name, run in variants.items()}, number=3,
                      rounds=rounds)
    report("fork4: 4 matmul-heavy calls, forked vs serial, 1 intra-op thread (target: forked <= 0.75x serial)",
           times, "tsjit serial")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds per benchmark")
    rounds = parser.parse_args().rounds
    print(f"torch {torch.__version__}, {os.cpu_count()} cores, {torch.get_num_interop_threads()} inter-op threads, "
          f"load average {os.getloadavg()[0]:.1f} (other processes make every number noisier)")
    bench_chain(rounds)
    torch.set_num_threads(1)
    bench_fork(rounds)


if __name__ == "__main__":
    main()
