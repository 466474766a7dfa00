"""run_pass: how every pipeline runs a pass, so logging and TSJIT_LINT=1 apply everywhere.

A pass is `name(graph, ...) -> bool` (DESIGN.md "Passes"). Running it through `run_pass` dumps the graph
afterwards when TSJIT_LOG_LEVEL names the pass's module, and lints the graph after the pass when TSJIT_LINT=1,
re-raising a lint failure with the pass's name so a broken rewrite is caught where it happened.
"""

from __future__ import annotations

from collections.abc import Callable

from tsjit import log
from tsjit.errors import IRError


def run_pass(pass_fn: Callable[..., bool], graph, *args, **kwargs) -> bool:
    """Run `pass_fn(graph, *args, **kwargs)`; return whether it changed the graph."""
    changed = bool(pass_fn(graph, *args, **kwargs))
    module = pass_fn.__module__
    if log.is_enabled(module, log.GRAPH_DUMP):
        log.log(log.GRAPH_DUMP, f"After {pass_fn.__name__} (changed={changed}):\n{graph}", module=module)
    if log.lint_enabled():
        try:
            graph.lint()
        except IRError as error:
            raise IRError(f"the graph is invalid after pass {pass_fn.__name__}: {error}") from error
    return changed
