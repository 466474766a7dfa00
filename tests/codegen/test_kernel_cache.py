"""The on-disk kernel cache: bounded by TSJIT_KERNEL_CACHE_MB with the least recently used libraries evicted
first, and shared between processes (a second process loads what the first compiled); the loaded libraries,
bounded by TSJIT_LOADED_KERNELS, without breaking the functions handed out."""

from __future__ import annotations

import ctypes
import os
import pathlib
import subprocess
import sys
import textwrap
import time

from kernel_helpers import fused

from tsjit import log
from tsjit.codegen import compiler
from tsjit.codegen.c_kernel import generate_kernel
from tsjit.lru import LRUCache

CHAIN = """
graph(%x : Float(*, device=cpu), %y : Float(*, device=cpu)):
  %a : Float(*, device=cpu) = aten::cos(%x)
  %b : Float(*, device=cpu) = aten::mul(%a, %y)
  return (%b)
"""


def library(directory, name: str, size: int, mtime: int):
    path = directory / f"{name}.so"
    path.write_bytes(b"\0" * size)
    os.utime(path, (mtime, mtime))
    return path


def test_eviction_removes_the_least_recently_used_libraries_first(tmp_path) -> None:
    paths = [library(tmp_path, f"k{i}", 1000, mtime) for i, mtime in enumerate((30, 10, 40, 20))]
    (tmp_path / "notes.txt").write_bytes(b"\0" * 5000)  # not a library: never evicted, not counted
    removed = compiler.evict(str(tmp_path), 2500)
    assert sorted(removed) == sorted(str(paths[i]) for i in (1, 3))  # mtimes 10 and 20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k0.so", "k2.so", "notes.txt"]
    assert compiler.evict(str(tmp_path), 2500) == []
    assert compiler.evict(str(tmp_path), 0, keep=str(paths[0])) == [str(paths[2])]


def test_a_new_kernel_past_the_limit_evicts_older_ones_but_stays(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("TSJIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TSJIT_KERNEL_CACHE_MB", "0.01")  # about 10 kB: less than any library
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    old = library(kernels, "old", 4000, 1)
    source = generate_kernel(fused(CHAIN)[0].g("Subgraph")).source + "/* eviction test */\n"
    assert compiler.load_kernel(source, "tsjit_kernel") is not None
    (new,) = kernels.glob("*.so")
    assert not old.exists() and new.name != old.name


def test_the_limit_comes_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("TSJIT_KERNEL_CACHE_MB", "1.5")
    assert compiler.cache_limit_bytes() == 1536 * 1024
    monkeypatch.setenv("TSJIT_KERNEL_CACHE_MB", "lots")
    assert compiler.cache_limit_bytes() == compiler.DEFAULT_CACHE_MB * 1024 * 1024
    monkeypatch.delenv("TSJIT_KERNEL_CACHE_MB")
    assert compiler.cache_limit_bytes() == compiler.DEFAULT_CACHE_MB * 1024 * 1024


def scaled(factor: int):
    """A loaded `double scale(double)` multiplying by `factor`, its function pointer typed for calls."""
    function = compiler.load_kernel(f"double scale(double x) {{ return x * {factor}; }}\n", "scale")
    function.restype, function.argtypes = ctypes.c_double, [ctypes.c_double]
    return function


def refuse_to_compile(*args):
    raise AssertionError("compiled again")


def test_loaded_libraries_are_bounded_and_evicting_one_breaks_no_function(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.setenv("TSJIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TSJIT_LOADED_KERNELS", "2")
    monkeypatch.setenv("TSJIT_LOG_LEVEL", "compiler")
    log.reset()
    monkeypatch.setattr(compiler, "_loaded", LRUCache("compiler", compiler.loaded_limit))
    functions = [scaled(factor) for factor in (2, 3, 5)]
    assert len(compiler._loaded) == 2 and "evicted the 1 least recently used" in capsys.readouterr().err
    assert [f(1.5) for f in functions] == [3.0, 4.5, 7.5]  # the first library was dropped: its function works
    monkeypatch.setattr(compiler, "_compile", refuse_to_compile)
    assert scaled(2)(4.0) == 8.0  # loaded again from the disk cache
    log.reset()


def test_the_loaded_limit_comes_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("TSJIT_LOADED_KERNELS", "7")
    assert compiler.loaded_limit() == 7
    monkeypatch.setenv("TSJIT_LOADED_KERNELS", "many")
    assert compiler.loaded_limit() == compiler.DEFAULT_LOADED_KERNELS
    monkeypatch.delenv("TSJIT_LOADED_KERNELS")
    assert compiler.loaded_limit() == compiler.DEFAULT_LOADED_KERNELS


ROOT = pathlib.Path(__file__).resolve().parents[2]  # the subprocesses import this tsjit
PROCESS = textwrap.dedent("""
    import sys
    import torch
    import tsjit
    import tsjit.codegen.compiler as compiler
    import tsjit.runtime.fusion as fusion

    if sys.argv[1] == "second":
        def refuse(*args):
            raise AssertionError("compiled again")
        compiler._compile = refuse
    fallbacks = []
    interpreted = fusion.interpreted
    fusion.interpreted = lambda g: (lambda run: lambda *v: (fallbacks.append(1), run(*v))[1])(interpreted(g))

    SOURCE = "def cell(x, y):\\n    return torch.tanh(x * 0.25 + y) * torch.sigmoid(y) - 3.5\\n"
    scripted = tsjit.CompilationUnit(SOURCE).cell
    x, y = torch.randn(5), torch.randn(5)
    for _ in range(2):  # the profiling executor's first call profiles, the second runs the kernel
        torch.testing.assert_close(scripted(x, y), torch.tanh(x * 0.25 + y) * torch.sigmoid(y) - 3.5)
    assert not fallbacks, "the kernel should have run"
    print(sum(1 for _ in __import__("pathlib").Path(compiler.cache_dir()).glob("*.so")))
""")


def test_a_second_process_loads_the_kernels_the_first_compiled(tmp_path) -> None:
    environment = {**os.environ, "TSJIT_CACHE_DIR": str(tmp_path), "TSJIT_SYNC_COMPILE": "1"}
    environment.pop("TSJIT_FUSION", None)
    for run in ("first", "second"):
        result = subprocess.run([sys.executable, "-c", PROCESS, run], env=environment, cwd=ROOT,
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == ["1"], run


# A compiler that starts a helper of its own (as gcc starts cc1) and never finishes; the process that started it
# on a background thread exits meanwhile.
SLOW_COMPILER = """#!/bin/sh
sleep 300 &
echo $$ $! > "$TSJIT_TEST_PIDS"
wait
"""
EXITING = textwrap.dedent("""
    import torch, tsjit

    @tsjit.script
    def f(x):
        return torch.tanh(x * 0.5 + 1.0)

    x = torch.rand(8)
    for _ in range(2):  # the profiling executor's first call profiles; the second is interpreted while it compiles
        torch.testing.assert_close(f(x), torch.tanh(x * 0.5 + 1.0))
    import os, time
    deadline = time.monotonic() + 60
    while not os.path.exists(os.environ["TSJIT_TEST_PIDS"]) and time.monotonic() < deadline:
        time.sleep(0.05)  # exit once the compiler runs
""")


def test_a_process_exits_without_waiting_for_its_background_compiles(tmp_path) -> None:
    """The compile never ends (the subprocess timeout would fail the test); exiting kills it, helpers and all."""
    fake = tmp_path / "cc"
    fake.write_text(SLOW_COMPILER)
    fake.chmod(0o755)
    pids_file = tmp_path / "pids"
    environment = {**os.environ, "TSJIT_CACHE_DIR": str(tmp_path / "cache"), "CC": str(fake),
                   "TSJIT_TEST_PIDS": str(pids_file)}
    for variable in ("TSJIT_FUSION", "TSJIT_SYNC_COMPILE"):
        environment.pop(variable, None)
    program = tmp_path / "program.py"
    program.write_text(EXITING)
    result = subprocess.run([sys.executable, str(program)], env=environment, cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    pids = [int(pid) for pid in pids_file.read_text().split()]
    assert len(pids) == 2
    for pid in pids:  # a killed process is gone (or a zombie) once the busy machine has scheduled it to die
        assert _dies(pid), f"process {pid} outlived the process that started it"


def _dies(pid: int, patience: float = 30.0) -> bool:
    deadline = time.monotonic() + patience
    stat = pathlib.Path(f"/proc/{pid}/stat")
    while time.monotonic() < deadline:
        try:
            if stat.read_text().split()[2] in ("Z", "X"):
                return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.05)
    return False
