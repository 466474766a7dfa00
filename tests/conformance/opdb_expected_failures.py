"""The (OpInfo, variant, path) cases of the op_db conformance run that tsjit is expected to fail.

An entry is allowed only when torch.jit fails the same case too (reason TORCH_JIT_FAILS_TOO, checked on every run
where torch.jit is present) or when its reason says why tsjit differs from torch.jit on purpose. A listed case
that passes fails the run, so the list stays true. `opdb_runner.py --write-expected` refreshes the
TORCH_JIT_FAILS_TOO entries from a run and keeps the others.
"""

from __future__ import annotations

TORCH_JIT_FAILS_TOO = "torch.jit fails this case too"

EXPECTED_FAILURES: dict[tuple[str, str, str], str] = {
    ('double', 'method', 'save_load'): TORCH_JIT_FAILS_TOO,
    ('double', 'method', 'script'): TORCH_JIT_FAILS_TOO,
    ('empty_strided', 'function', 'save_load'): TORCH_JIT_FAILS_TOO,
    ('empty_strided', 'function', 'script'): TORCH_JIT_FAILS_TOO,
    ('masked.sum', 'function', 'save_load'): TORCH_JIT_FAILS_TOO,
    ('masked.sum', 'function', 'script'): TORCH_JIT_FAILS_TOO,
    ('nonzero', 'function', 'save_load'): TORCH_JIT_FAILS_TOO,
    ('nonzero', 'function', 'script'): TORCH_JIT_FAILS_TOO,
    ('nonzero', 'method', 'save_load'): TORCH_JIT_FAILS_TOO,
    ('nonzero', 'method', 'script'): TORCH_JIT_FAILS_TOO,
}
