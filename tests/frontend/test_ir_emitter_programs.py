"""The parser's program corpus (script_corpus.py) through the IR emitter: every program torch.jit compiles,
tsjit compiles to a graph with the same node kinds, and every program torch.jit rejects, tsjit rejects too
(where the two parsers accept the same syntax)."""

from __future__ import annotations

import collections

import pytest
import torch
from script_corpus import PROGRAMS

from tsjit.api import CompilationUnit
from tsjit.errors import TsjitError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# programs only one of the two accepts because the parsers differ (tsjit's parser is more permissive,
# see tsjit/frontend/parser.py), or that need classes (compiled by the module frontend)
PARSER_DIFFERENCES = {
    "python_string_escapes", "comprehensions", "one_line_suites",
    "same_line_type_comment", "assignment_type_comment", "power_and_unary", "script_class",
    "named_tuple_class", "class_with_constants", "enum_class", "with_statements",
}


def torch_kinds(block) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    for node in block.nodes():
        counts[node.kind()] += 1
        for inner in node.blocks():
            counts.update(torch_kinds(inner))
    return counts


def torch_compile(source: str):
    try:
        return torch.jit.CompilationUnit(source)
    except Exception:
        return None


@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - PARSER_DIFFERENCES))
def test_program(name):
    source = PROGRAMS[name]
    theirs = torch_compile(source)
    if theirs is None:
        with pytest.raises(TsjitError):
            CompilationUnit(source)
        return
    ours = CompilationUnit(source)
    for function in theirs.get_functions():
        expected = torch_kinds(function.graph)
        actual = collections.Counter(str(n.kind) for n in getattr(ours, function.name).graph.all_nodes())
        assert actual == expected, function.name
