"""`python -m bench.load_long`: loading and scripting long methods, whose time should grow linearly with their size.

A method of N statements `x{i} = torch.add(x, {i})` (each reads the same input, as generated code does), as a
module's forward:
- load: an archive torch.jit saved (torch.jit scripts it; not timed) through `tsjit.load`;
- script: the same source through `tsjit.CompilationUnit` (parsing, emitting, the cleanup passes).
Each size runs in a fresh process (CPU time of that process); the last column is the time per statement, which a
linear loader keeps flat. Numbers are for reading, never for asserting.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time

SIZES = (1_000, 2_000, 8_000, 20_000)


def method_source(statements: int) -> str:
    """`def forward(x)` with `statements` additions of x and a constant, returning x."""
    body = "".join(f"    x{i} = torch.add(x, {i})\n" for i in range(statements))
    return f"def forward(x):\n{body}    return x\n"


def archive_bytes(statements: int) -> bytes:
    """A module archive whose forward has `statements` statements: torch.jit saves a module whose forward returns
    x (torch.jit reads the source from a file, so the class is written to a temporary module), and the statements
    are written into its code, as a generator of archives would (torch.jit's own printer drops them: unused)."""
    import importlib.util
    import tempfile
    import zipfile

    import torch

    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "long_method.py")
        with open(path, "w") as file:
            file.write("import torch\n\n\nclass Long(torch.nn.Module):\n    def forward(self, x):\n        return x\n")
        spec = importlib.util.spec_from_file_location("long_method", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        saved = io.BytesIO()
        torch.jit.save(torch.jit.script(module.Long()), saved)
    body = "".join(f"    x{i} = torch.add(x, {i})\n" for i in range(statements))
    patched = io.BytesIO()
    with zipfile.ZipFile(saved) as source, zipfile.ZipFile(patched, "w") as target:
        for name in source.namelist():
            data = source.read(name)
            if name.endswith("long_method.py"):
                data = data.replace(b"    return x\n", body.encode() + b"    return x\n")
            if not name.endswith(".debug_pkl"):  # its source ranges are those of the code before the statements
                target.writestr(name, data)
    return patched.getvalue()


def measure(how: str, statements: int) -> float:
    """CPU seconds to load (or script) the method and run it once, in this process."""
    import torch

    import tsjit

    torch.set_num_threads(1)
    if how == "load":
        data = archive_bytes(statements)
        start = time.process_time()
        module = tsjit.load(io.BytesIO(data))
        module(torch.ones(2))
    else:
        source = method_source(statements)
        start = time.process_time()
        tsjit.CompilationUnit(source).forward(torch.ones(2))
    return time.process_time() - start


def bench_load_long(sizes: tuple[int, ...] = SIZES) -> None:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    print("\nlong methods: N statements `x{i} = torch.add(x, i)`, load (torch.jit's archive) and script, "
          "each a fresh process, CPU time (target: time per statement flat)")
    print(f"  {'statements':>10} {'load':>9} {'per stmt':>9} | {'script':>9} {'per stmt':>9}")
    for statements in sizes:
        row = []
        for how in ("load", "script"):
            command = [sys.executable, "-m", "bench.load_long", how, str(statements)]
            output = subprocess.run(command, capture_output=True, text=True, check=True, env=env, cwd=root).stdout
            row.append(json.loads(output.splitlines()[-1])["cpu"])
        print(f"  {statements:>10} {row[0]:>8.2f}s {row[0] / statements * 1e6:>7.0f}us | "
              f"{row[1]:>8.2f}s {row[1] / statements * 1e6:>7.0f}us")


def main() -> None:
    """`python -m bench.load_long` prints the table; `python -m bench.load_long load|script N` one JSON line."""
    if len(sys.argv) == 3:
        print(json.dumps({"cpu": measure(sys.argv[1], int(sys.argv[2]))}))
    else:
        bench_load_long(tuple(int(n) for n in sys.argv[1:]) or SIZES)


if __name__ == "__main__":
    main()
