"""Compiling kernel sources with the system C compiler and loading them with ctypes.

The compiler is $CC, else `cc` or `gcc` from PATH, run as `cc -O3 -shared -fPIC ... -lm` (about 0.1 s for a
kernel). The flags keep IEEE semantics: no -ffast-math, and no contraction of `a * b + c` into one fused
multiply-add, since eager rounds after each operation; -fno-math-errno only stops math functions from setting
errno. There is no -march=native, so a cached library also runs on another machine sharing the cache. Each
kernel is first built with vectorized loops calling glibc's vector math library (libmvec: sin, exp, tanh... four
at a time, about 6x faster on long chains, as accurate as PyTorch's own vectorized kernels); where that does not
build or load (no glibc, an old one), it is built plain, with scalar math calls.

Shared libraries are cached by a hash of the source, the compiler and the flags: in memory, and on disk under
$TSJIT_CACHE_DIR/kernels (default $XDG_CACHE_HOME/tsjit/kernels, else ~/.cache/tsjit/kernels), written
atomically so that parallel processes never load half a file. The disk cache is bounded: when a new library
takes it past TSJIT_KERNEL_CACHE_MB megabytes (default 256), the least recently used libraries go, oldest
modification time first (loading a cached library touches it). `load_kernel` returns None (and logs why, under
TSJIT_LOG_LEVEL=compiler) when there is no compiler or no variant builds; callers then interpret the subgraph.
With `compile=False` it only loads what is cached, so that the caller can compile elsewhere (runtime/fusion.py
compiles on a background thread).

The loaded libraries are kept in memory by key too, at most TSJIT_LOADED_KERNELS of them (default 512), the least
recently used dropped first (logged under TSJIT_LOG_LEVEL=compiler). Dropping one never breaks a plan holding its
function: a ctypes function pointer keeps its library object, and ctypes never unloads a library. A dropped
library needed again is loaded again from disk (the dynamic loader hands back the mapping it still has), or
compiled again if the disk cache evicted it meanwhile.

A compiler still running when the process exits is killed (a background compile must not outlive its
process: left alone, a C compiler on a large kernel went on for minutes after the test that started it).
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import os
import platform
import shutil
import signal
import subprocess
import tempfile
import threading

from tsjit import log
from tsjit.lru import LRUCache

FLAGS = ("-std=gnu11", "-O3", "-shared", "-fPIC", "-fno-math-errno", "-ffp-contract=off")
# tried first: vectorized loops calling glibc's vector math library; where that fails to build or load, plain
VARIANTS = (("-DTSJIT_VECTOR_MATH", "-fopenmp-simd", "-lmvec"), ())
_TIMEOUT_SECONDS = 120
DEFAULT_CACHE_MB = 256
DEFAULT_LOADED_KERNELS = 512
_NOT_LOADED = object()
_running: set[subprocess.Popen] = set()  # compilers running now, killed at exit
_running_lock = threading.Lock()
_exiting = False


def loaded_limit() -> int:
    """TSJIT_LOADED_KERNELS: how many loaded libraries (or failed builds) stay in memory (default 512)."""
    text = os.environ.get("TSJIT_LOADED_KERNELS")
    if text and text.strip().isdigit():
        return max(1, int(text))
    if text:
        log.log(log.GRAPH_DUMP, f"TSJIT_LOADED_KERNELS={text!r} is not a count: {DEFAULT_LOADED_KERNELS}")
    return DEFAULT_LOADED_KERNELS


_loaded: LRUCache[ctypes.CDLL | None] = LRUCache("compiler", loaded_limit)  # key -> library, None if no build


def load_kernel(source: str, name: str, compile: bool = True):
    """The function `name` of the compiled `source` (a ctypes function pointer), or None if it cannot be built
    (or, with `compile=False`, is not built yet)."""
    compiler = find_compiler()
    if compiler is None:
        log.log(log.GRAPH_DUMP, "no C compiler found ($CC, cc, gcc): fused kernels are interpreted")
        return None
    for variant in VARIANTS:
        key = _cache_key(source, compiler, variant)
        library = _loaded.get(key, _NOT_LOADED)
        if library is _NOT_LOADED:
            path = os.path.join(cache_dir(), f"{key}.so")
            if not compile and not os.path.exists(path):
                return None
            library = _build_and_load(source, compiler, variant, path)
            _loaded.put(key, library)
        if library is not None:
            return getattr(library, name)
    return None


def find_compiler() -> str | None:
    candidates = (os.environ.get("CC"), "cc", "gcc")
    return next((path for path in map(_which, candidates) if path), None)


def _which(name: str | None) -> str | None:
    return shutil.which(name) if name else None


def cache_dir() -> str:
    base = os.environ.get("TSJIT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "tsjit")
    return os.path.join(base, "kernels")


def _cache_key(source: str, compiler: str, variant: tuple[str, ...]) -> str:
    text = "\0".join((source, compiler, *FLAGS, *variant, platform.machine(), platform.system()))
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def _build_and_load(source: str, compiler: str, variant: tuple[str, ...], path: str) -> ctypes.CDLL | None:
    if os.path.exists(path):
        touch(path)
    elif _compile(source, compiler, variant, path):
        evict(cache_dir(), cache_limit_bytes(), keep=path)
    else:
        return None
    try:
        return ctypes.CDLL(path)
    except OSError as error:  # a damaged cache entry: remove it, so the next process compiles again
        log.log(log.GRAPH_DUMP, f"could not load {path}: {error}")
        _remove(path)
        return None


def _compile(source: str, compiler: str, variant: tuple[str, ...], path: str) -> bool:
    """Compile into a temporary file next to `path`, then rename it to `path`; returns whether that worked."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with tempfile.TemporaryDirectory(dir=os.path.dirname(path)) as scratch:
            source_path, library_path = os.path.join(scratch, "kernel.c"), os.path.join(scratch, "kernel.so")
            with open(source_path, "w") as file:
                file.write(source)
            returncode, errors = _run([compiler, *FLAGS, "-o", library_path, source_path, *variant, "-lm"])
            if returncode != 0:
                log.log(log.GRAPH_DUMP, f"{compiler} failed ({returncode}):\n{errors}\n{source}")
                return False
            os.replace(library_path, path)
    except (OSError, subprocess.SubprocessError) as error:
        log.log(log.GRAPH_DUMP, f"could not compile a kernel with {compiler}: {error}")
        return False
    log.graph_update(f"compiled {path}")
    return True


def _run(command: list[str]) -> tuple[int, str]:
    """Run a compiler to completion (killed after _TIMEOUT_SECONDS); its exit code and standard error. It starts
    under the lock the exit handler takes, so that no compiler can start unseen while the process exits."""
    with _running_lock:
        if _exiting:  # a daemon thread after the exit handler ran: a compiler started now would never be killed
            return -signal.SIGKILL, "the process is exiting"
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)  # its own process group: cc1 and as die with it
        _running.add(process)
    with process:
        try:
            _, errors = process.communicate(timeout=_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            _kill(process)
            raise
        finally:
            with _running_lock:
                _running.discard(process)
    return process.returncode, errors


@atexit.register
def _kill_running() -> None:
    global _exiting
    with _running_lock:
        _exiting = True
        for process in _running:
            _kill(process)


def _kill(process: subprocess.Popen) -> None:
    """Kill a compiler with the programs it started."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:  # already gone
        pass


def cache_limit_bytes(variable: str = "TSJIT_KERNEL_CACHE_MB", default_mb: float = DEFAULT_CACHE_MB) -> int:
    """The megabytes of the environment variable `variable` in bytes (default 256 MB); iree.py reads its own."""
    text = os.environ.get(variable)
    try:
        megabytes = float(text) if text else default_mb
    except ValueError:
        log.log(log.GRAPH_DUMP, f"{variable}={text!r} is not a number: {default_mb} MB")
        megabytes = default_mb
    return int(megabytes * 1024 * 1024)


def evict(directory: str, limit: int, keep: str | None = None, suffix: str = ".so") -> list[str]:
    """Remove the least recently used files named `*suffix` (oldest mtime first) of `directory` until the rest
    take at most `limit` bytes, never `keep`; returns the paths removed. Another process may remove files at the
    same time: what is gone already is skipped. tsjit/mlir/iree.py bounds its disk cache with it too."""
    entries = []
    with os.scandir(directory) as scan:
        for entry in scan:
            try:
                if entry.name.endswith(suffix) and entry.is_file():
                    stat = entry.stat()
                    entries.append((stat.st_mtime_ns, stat.st_size, entry.path))
            except OSError:
                continue
    total, removed = sum(size for _, size, _ in entries), []
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        if path != keep:
            _remove(path)
            removed.append(path)
            total -= size
    if removed:
        log.graph_update(f"evicted {len(removed)} files from {directory}")
    return removed


def touch(path: str) -> None:
    """Mark a cached file as just used, for eviction."""
    try:
        os.utime(path)
    except OSError:
        pass


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
