"""What `tsjit.load(f, trusted=False)` adds to every load: the archive's code is compiled and read before any of
it runs, an archive whose code can reach beyond its own values (files, other processes, process-wide state:
ops/outside_world.py) is refused with the list of what was found where, and `__setstate__` runs under a step
budget, so that loading ends. The threat model is in the README ("Loading archives you do not trust")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tsjit.errors import SerializationError
from tsjit.ir.graph import Graph, Node
from tsjit.ops.outside_world import outside_world_effect
from tsjit.runtime.interpreter import Code, InterpreterError, InterpreterState, StepBudgetExceeded
from tsjit.serialization.archive_reader import ArchiveLimits


def refuse_outside_world(importer, label: str) -> None:
    """Compile every definition of the archive and refuse it if any uses an outside-world operator."""
    importer.import_all()
    importer.define_all()
    refused = [f"{importer.path_of(function)}: {function.qualname} calls {node.kind} ({effect})"
               for function in importer.functions() for node, effect in _outside_world_nodes(function.graph)]
    if refused:
        raise SerializationError(f"{label} is not trusted and its code reaches outside the program; refused:\n  "
                                 + "\n  ".join(dict.fromkeys(refused)) + "\n(load it as trusted, `trusted=True` or "
                                 "the tsjit command's `--trusted`, only if you trust where it came from)")


def _outside_world_nodes(graph: Graph) -> Iterator[tuple[Node, str]]:
    for node in graph.nodes_with_held_graphs():
        effect = outside_world_effect(str(node.kind))
        if effect is not None:
            yield node, effect


def run_with_step_budget(graph: Graph, inputs: tuple[Any, ...], limits: ArchiveLimits) -> Any:
    """Run a graph in the interpreter, failing after `limits.max_setstate_steps` instructions with an error that
    says how to allow more."""
    try:
        return InterpreterState(Code(graph), inputs, max_steps=limits.max_setstate_steps).run()
    except InterpreterError as error:
        if not isinstance(error.__cause__, StepBudgetExceeded):
            raise
        raise SerializationError(f"{error}\n(with trusted=False, each __setstate__ may run "
                                 f"{limits.exceeded('', 'max_setstate_steps').strip()[1:]}") from None
