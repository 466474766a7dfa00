"""Every function of the e2e corpus, scripted by tsjit: it runs and matches eager PyTorch, and its inlined
graph has the same multiset of node kinds as torch.jit's (torch.jit is the oracle while it exists), or the
difference recorded in the corpus."""

from __future__ import annotations

import collections

import pytest
import torch
from corpus import CASES, Case

from tsjit.api import script

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own

def same(expected, actual) -> bool:
    """Eager's result against tsjit's: tensors allclose (same dtype and shape), containers elementwise."""
    if isinstance(expected, torch.Tensor):
        return (isinstance(actual, torch.Tensor) and expected.shape == actual.shape
                and expected.dtype == actual.dtype and torch.allclose(expected, actual, equal_nan=True))
    if isinstance(expected, list | tuple):
        return (isinstance(actual, list | tuple) and len(expected) == len(actual)
                and all(same(e, a) for e, a in zip(expected, actual)))
    if isinstance(expected, dict):
        return isinstance(actual, dict) and expected.keys() == actual.keys() and all(
            same(expected[k], actual[k]) for k in expected)
    if isinstance(expected, float):
        return isinstance(actual, float) and abs(expected - actual) <= 1e-6 * max(1.0, abs(expected))
    return type(expected) is type(actual) and expected == actual


def torch_kinds(block) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    for node in block.nodes():
        counts[node.kind()] += 1
        for inner in node.blocks():
            counts.update(torch_kinds(inner))
    return counts


def kinds_difference(torch_graph, our_graph) -> dict[str, int]:
    """Per node kind, how many more nodes our graph has than torch.jit's (both inlined); only the kinds that differ."""
    expected = torch_kinds(torch_graph)
    ours = collections.Counter(str(n.kind) for n in our_graph.all_nodes())
    return {kind: ours[kind] - expected[kind] for kind in set(ours) | set(expected) if ours[kind] != expected[kind]}


def run(case: Case, function):
    torch.manual_seed(0)
    return function(*case.make_inputs())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_runs_and_matches_eager(case: Case):
    expected = run(case, case.function)
    actual = run(case, script(case.function))
    assert same(expected, actual), f"eager {expected!r} != tsjit {actual!r}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_node_kinds_match_torch_jit(case: Case):
    theirs = torch.jit.script(case.function).graph.copy()
    torch._C._jit_pass_inline(theirs)
    assert kinds_difference(theirs, script(case.function).inlined_graph) == case.kinds_difference, case.why


def test_corpus_is_large():
    assert len(CASES) >= 120
