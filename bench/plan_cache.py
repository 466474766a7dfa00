"""`python -m bench.plan_cache`: memory growth over 10,000 calls whose inputs change among 100 specs (shapes), for
eager PyTorch and for a tsjit-scripted function, each in a fresh process. A graph executor keeps a specialized
plan per input spec up to TSJIT_PLAN_CACHE_SIZE (least recently used evicted); without a bound, 100 specs made
100 plans. Numbers are for reading, never for asserting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

CALLS, SPECS = 10_000, 100


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def program(x, w: float):
    return (x * w + 1).relu() * 2 + x


def spec_inputs() -> list:
    """100 inputs of distinct specs: 10 dtypes x ranks 1 to 10 (2 elements along each dimension)."""
    import torch

    dtypes = (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.int16,
              torch.int8, torch.uint8, torch.bool)
    return [torch.ones((2,) * rank).to(dtype) for dtype in dtypes for rank in range(1, 11)]


def measure(variant: str) -> dict:
    import torch

    torch.set_num_threads(1)
    w = 0.5
    inputs = spec_inputs()
    function = program
    if variant == "tsjit":
        import tsjit

        function = tsjit.script(program)
    function(inputs[0], w)
    before, start = _rss_mb(), time.perf_counter()
    for call in range(CALLS):
        function(inputs[(call * 37) % SPECS], w)
    result = {"variant": variant, "growth_mb": _rss_mb() - before, "seconds": time.perf_counter() - start}
    if variant == "tsjit":
        result["plans"] = len(function._runtime_function().executor.plans)
    return result


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--variant":
        print(json.dumps(measure(sys.argv[2])))
        return
    rows = []
    for variant in ("eager", "tsjit"):
        output = subprocess.run([sys.executable, "-m", "bench.plan_cache", "--variant", variant], check=True,
                                capture_output=True, text=True).stdout
        rows.append(json.loads(output.strip().splitlines()[-1]))
    print(f"{CALLS} calls, inputs changing among {SPECS} specs (TSJIT_PLAN_CACHE_SIZE="
          f"{os.environ.get('TSJIT_PLAN_CACHE_SIZE', 'default')})")
    for row in rows:
        print(f"  {row['variant']:6s} memory growth {row['growth_mb']:7.1f} MB   {row['seconds']:6.2f} s")
    print(f"  tsjit - eager: {rows[1]['growth_mb'] - rows[0]['growth_mb']:.1f} MB")


if __name__ == "__main__":
    main()
