"""Closures and fork in scripted code (TorchScript's emitClosure and emitForkExpr; part of the IR emitter).

A nested `def` and the call a `fork` starts are both emitted as a prim::Closure: a node with one block holding
the function body, emitted in a new def frame that reads the enclosing function's variables directly. `fork`
is a prim::forkClosure taking that closure; its result is a Future of what the closure returns:

    def f(x, k: int):                       %c : NoneType = prim::Closure()
        def inner():                          block0():
            return x * k                        %y : Tensor = aten::mul(%x, %k)
        fut = fork(inner)                       -> (%y)
        return wait(fut)                    %fut : Future[Tensor] = prim::forkClosure(%c)
                                            %r : Tensor = aten::wait(%fut)

`fork(fn, *args, **kwargs)` with anything callable but a closure (a function, a method, `self.sub`, a builtin
such as `torch.neg`) wraps the call `fn(*args, **kwargs)` in a closure; the arguments are evaluated before it,
in the enclosing block. The cleanup passes later turn each forkClosure into a prim::fork with a Subgraph
(lift_closures.py).

As in TorchScript, closures exist to be forked: calling one is "cannot call a closure", and forking one that
takes parameters is "Cannot fork lambda with parameters". torch.jit's Python frontend (and tsjit's,
python_ast.py) rejects nested defs; they come from TorchScript source: CompilationUnit strings and archives,
whose printed code forks a local `def __forked_function():`.
"""

from __future__ import annotations

from collections.abc import Callable

from tsjit.errors import CompileError
from tsjit.frontend.environment import meaningful_name
from tsjit.frontend.ir_emitter import NOT_IN_LOOP
from tsjit.frontend.sugared_value import ClosureValue, SimpleValue, SugaredValue, insert_node
from tsjit.frontend.tree_views import Apply, Def
from tsjit.ir import types as T
from tsjit.ir.graph import Block
from tsjit.ir.symbols import prim


def emit_closure(emitter, emit_body: Callable[[Block], None]) -> ClosureValue:
    """A prim::Closure whose block `emit_body` fills, in a def frame of its own and outside any loop (so
    `return` returns from the closure and `break` is an error). Its output stands for the closure until it is
    lifted; typed None, as in TorchScript, since it is no first-class value."""
    graph = emitter.graph
    node = insert_node(graph, prim.Closure, [], T.NoneType.get())
    block = node.add_block()
    with emitter.loop_guard(NOT_IN_LOOP), graph.insert_point_guard(block):
        emitter.push_frame(block, starts_def=True)
        emit_body(block)
        emitter.pop_frame(ends_def=True)
    return ClosureValue(node.output())


def emit_nested_def(emitter, definition: Def) -> None:
    """`def name(params): body` inside a function binds `name` to a closure over the variables in scope."""
    def emit_body(block: Block) -> None:
        schema = emitter.type_parser.parse_schema_from_def(definition)
        if len(schema.returns) == 1:
            emitter.def_stack[-1].declared_return_type = schema.returns[0].type
        for param, argument in zip(definition.decl.params, schema.arguments):
            name = param.ident.name
            value = block.add_input(name if meaningful_name(name) else None)
            value.set_type(argument.type)
            emitter.environment.set_var(param.ident.range, name, value)
        emitter.emit_statements(definition.statements)
        emitter.handle_maybe_no_return(definition, block)
        emitter.emit_output(block)

    closure = emit_closure(emitter, emit_body)
    emitter.environment.set_sugared_var(definition.name.range, definition.name.name, closure, None)


def emit_fork(emitter, apply: Apply, type_hint) -> SugaredValue:
    """`fork(fn, *args, **kwargs)`: a Future[T] of the call, `%fut = prim::forkClosure(%closure)`."""
    loc = apply.range
    if not apply.inputs:
        raise CompileError("Expected at least one argument to fork()", loc)
    forked = emitter.emit_sugared_expr(apply.inputs[0], 1)
    args = emitter.get_values(apply.inputs[1:], maybe_unpack=True, for_call=True)
    kwargs = emitter.emit_attributes(apply.attributes)
    graph = emitter.graph
    fork = insert_node(graph, prim.forkClosure, [], T.NoneType.get(), loc)
    with graph.insert_point_guard(fork):
        if isinstance(forked, ClosureValue):
            # a closure is forked as it is, and arguments given with it are ignored (as in TorchScript); one
            # with parameters is reported when it is lifted
            closure = forked.as_value(loc, emitter)
        else:
            def emit_call(block: Block) -> None:
                result = forked.call(loc, emitter, args, kwargs, 1).as_value(loc, emitter)
                block.register_output(result)

            closure = emit_closure(emitter, emit_call).as_value(loc, emitter)
    fork.add_input(closure)
    fork.output().set_type(T.FutureType(closure.node.blocks[0].outputs[0].type))
    return SimpleValue(fork.output())
