"""The kernel tests' fixture: the count of FusionGroup fallbacks."""

from __future__ import annotations

import pytest

import tsjit.runtime.fusion as fusion


@pytest.fixture
def fallbacks(monkeypatch):
    """Counts the calls of FusionGroup fallbacks made while the test runs (kernels compile on the first call, which
    waits for them: TSJIT_SYNC_COMPILE)."""
    monkeypatch.setenv("TSJIT_SYNC_COMPILE", "1")
    calls = []
    interpreted = fusion.interpreted

    def counting(subgraph):
        run = interpreted(subgraph)
        return lambda *values: (calls.append(values), run(*values))[1]

    monkeypatch.setattr(fusion, "interpreted", counting)
    return calls
