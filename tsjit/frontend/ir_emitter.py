"""The IR emitter: a Def tree to a Graph, type-checking as it goes (TorchScript's ir_emitter.cpp, `to_ir`).

    def f(a, b, c):                  graph(%a.1 : Tensor, %b.1 : Tensor, %c.1 : Tensor):
        d = a + b                      %5 : int = prim::Constant[value=1]()
        if c:                          %d.1 : Tensor = aten::add(%a.1, %b.1, %5)
            e = d + d                  %9 : bool = aten::Bool(%c.1)
        else:                          %e : Tensor = prim::If(%9)
            e = b + d                    block0():
        return e                           %e.1 : Tensor = aten::add(%d.1, %d.1, %5)
                                           -> (%e.1)
                                         block1():
                                           %e.3 : Tensor = aten::add(%b.1, %d.1, %5)
                                           -> (%e.3)
                                       return (%e)

The emitter walks statements and expressions, turning names into SugaredValues through the Environment
(environment.py) and the Resolver (resolver.py), and emits nodes at the graph's insertion point. Variables
are prim::Store / prim::Load nodes and `return`, `break` and `continue` are prim::ReturnStmt,
prim::BreakStmt and prim::ContinueStmt nodes while emitting; `compile_function` then runs the passes that
turn this into the final graph, as TorchScript does after emitting:

    convert_to_ssa (with the exit transform) -> modified_loops_to_while_loops -> normalize_ops
    -> lower_simple_tuples -> constant_propagation_immutable_types -> constant_pooling -> order_outputs_by_first_use

Typing follows TorchScript: unannotated parameters are Tensor; `x: List[int] = []` and `tsjit.annotate` give
empty containers their type; `x is None` / `x is not None` (also inside `and`/`or`, `assert`, `if`) refine
Optional variables; the two branches of an if must agree on the types of variables used afterwards.
Errors are CompileErrors that underline the offending source.
"""

from __future__ import annotations

import contextlib
import inspect
import textwrap
import threading
import warnings
from collections.abc import Callable
from typing import Any

from tsjit import garbage_collection
from tsjit.errors import CompileError
from tsjit.frontend.cleanup_passes import run_cleanup_passes
from tsjit.frontend.convert_to_ssa import convert_to_ssa
from tsjit.frontend.environment import Environment, meaningful_name
from tsjit.frontend.example_types import with_parameter_types
from tsjit.frontend.indexing import emit_int_and_slice_indexing
from tsjit.frontend.parser import parse_definitions
from tsjit.frontend.python_ast import get_jit_def
from tsjit.frontend.resolver import FunctionTableResolver, PythonResolver, Resolver
from tsjit.frontend.script_type_parser import ScriptTypeParser
from tsjit.frontend.sugared_value import (
    BuiltinFunction,
    ExceptionMessageValue,
    ExceptionValue,
    MagicMethod,
    MethodValue,
    SimpleValue,
    SliceValue,
    SpecialFormValue,
    SugaredValue,
    create_list,
    create_tuple,
    emit_builtin_call,
    insert_node,
    insert_unchecked_cast,
    try_convert_to_type,
    tuple_elements,
)
from tsjit.frontend.tree_views import (
    Apply,
    Assert,
    Assign,
    AugAssign,
    Break,
    Const,
    Continue,
    Def,
    Delete,
    DictComp,
    DictLiteral,
    Expr,
    For,
    Ident,
    If,
    ListComp,
    ListLiteral,
    Raise,
    Return,
    Select,
    SliceExpr,
    Starred,
    Stmt,
    StringLiteral,
    Subscript,
    TernaryIf,
    TupleLiteral,
    Var,
    While,
    With,
)
from tsjit.ir import types as T
from tsjit.ir.constants import INT64_MAX, NOT_CONSTANT, constant_of, must_be_none
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.schema import Argument, FunctionSchema
from tsjit.ir.symbols import Symbol, aten, prim
from tsjit.ir.types import _standardize_union
from tsjit.passes.constant_pooling import constant_pooling
from tsjit.passes.constant_propagation import constant_propagation_immutable_types, run_node_if_inputs_are_constant
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.inliner import inline_calls
from tsjit.passes.peephole import peephole_optimize
from tsjit.source import lexer as lx
from tsjit.source.source_range import Source


# ==============================================================================================================
# functions
# ==============================================================================================================
class GraphFunction:
    """A TorchScript function: its name, Graph and FunctionSchema, compiled on first use (C++ GraphFunction).

    Compilation is lazy so that functions defined together can call each other in any order; a function asked
    for while it is being compiled is calling itself, which TorchScript rejects.
    """

    def __init__(self, qualname: str, definition: Def, resolver: Resolver, defaults: dict | None = None,
                 self_binding=None):
        self.qualname = qualname
        self.name = qualname.rsplit(".", 1)[-1]
        self.definition: Def | None = definition
        self.resolver = resolver
        self.defaults = defaults
        self.self_binding = self_binding
        self.graph = Graph()
        self._schema: FunctionSchema | None = None
        self._optimized: Graph | None = None
        self._runtime = None  # the runtime Function, built by tsjit.runtime.function.runtime_function
        self._state = "undefined"
        self._lock = threading.RLock()

    def ensure_defined(self, loc=None) -> None:
        if self._state == "defined":
            return
        with self._lock:
            if self._state == "defining":
                what = "method" if self.self_binding is not None else "function"
                raise CompileError(f"{what} '{self.name}' is called recursively. Recursive calls are not "
                                   "supported", loc)
            if self._state == "undefined":
                self._define()

    def _define(self) -> None:
        self._state = "defining"
        try:
            with garbage_collection.paused():
                self._schema = FunctionEmitter(self).emit()
            self._state = "defined"
            self.definition = None  # its trees are not needed again: freed now, not walked by the collector
        except BaseException:
            self._state = "undefined"
            self.graph = Graph()
            raise

    @property
    def schema(self) -> FunctionSchema:
        self.ensure_defined()
        return self._schema

    def optimized_graph(self) -> Graph:
        """A copy with calls inlined, peephole rules applied, constants folded and pooled: what inlining into
        callers copies and what runs (C++ GraphFunction::optimized_graph / preoptimizeGraph). What the peephole
        rules and folding leave unused goes in one dead code elimination after both (each of C++'s passes runs
        its own): the graph holds every function it calls, and folding needs nothing removed first."""
        self.ensure_defined()
        if self._optimized is None:
            with garbage_collection.paused():
                graph = self.graph.copy()
                inline_calls(graph)
                changed = peephole_optimize(graph, remove_dead=False)
                if constant_propagation_immutable_types(graph, remove_dead=False) or changed:
                    eliminate_dead_code(graph)
                constant_pooling(graph)
            self._optimized = graph
        return self._optimized

    def __call__(self, *args: Any) -> Any:
        """Run the optimized graph on the runtime: how a runtime Object calls its methods (`obj.__enter__()`
        for prim::Enter, a method called from Python)."""
        from tsjit.runtime.function import runtime_function  # deferred: the one allowlisted edge up to runtime

        return runtime_function(self)(*args)

    def __repr__(self) -> str:
        return f"<GraphFunction {self.qualname}>"


def python_function_definition(fn, parameter_types: dict[str, T.Type] | None = None
                               ) -> tuple[Def, Resolver, dict[str, Any]]:
    """The Def, resolver and default values `torch.jit.script` uses for a Python function; `parameter_types`
    annotates the parameters the source leaves unannotated (types inferred from example inputs)."""
    definition = get_jit_def(fn, fn.__name__)
    if parameter_types:
        definition = with_parameter_types(definition, parameter_types)
    defaults = {name: p.default for name, p in inspect.signature(fn).parameters.items()
                if p.default is not inspect.Parameter.empty}
    return definition, PythonResolver.for_function(fn), defaults


def compile_source(source, resolver: Resolver, prefix: str | None = None) -> list[GraphFunction]:
    """The functions of TorchScript source text, able to call each other (C++ CompilationUnit::define).

    They compile lazily; `ensure_defined()` compiles one (and what it calls).
    """
    if isinstance(source, str):
        source = Source(textwrap.dedent(source), "<string>", 1)
    table: dict[str, GraphFunction] = {}
    shared = FunctionTableResolver(resolver, table)
    functions = []
    for definition in parse_definitions(source):
        if not isinstance(definition, Def):
            raise CompileError("classes in CompilationUnit source are not supported yet", definition.range)
        qualname = f"{prefix}.{definition.name.name}" if prefix else definition.name.name
        function = GraphFunction(qualname, definition, shared)
        table[definition.name.name] = function
        functions.append(function)
    return functions


# ==============================================================================================================
# refinements: what a condition tells about the types of variables
# ==============================================================================================================
class RefinementSet:
    """Refined types (name -> Type) that hold when a condition is true, and when it is false.

    `x is not None` refines Optional[T] `x` to T when true; `and`/`or`/`not` combine the sets.
    """

    def __init__(self, true_refinements: dict[str, T.Type] | None = None,
                 false_refinements: dict[str, T.Type] | None = None):
        self.true_refinements = dict(true_refinements or {})
        self.false_refinements = dict(false_refinements or {})

    def and_(self, other: RefinementSet) -> RefinementSet:
        # both sides true: both refinements hold; false: only those both sides share
        return RefinementSet(_union(self.true_refinements, other.true_refinements),
                             _intersection(self.false_refinements, other.false_refinements))

    def or_(self, other: RefinementSet) -> RefinementSet:
        return RefinementSet(_intersection(self.true_refinements, other.true_refinements),
                             _union(self.false_refinements, other.false_refinements))

    def not_(self) -> RefinementSet:
        return RefinementSet(self.false_refinements, self.true_refinements)

    def active(self) -> dict[str, T.Type]:
        return self.true_refinements


def _union(a: dict[str, T.Type], b: dict[str, T.Type]) -> dict[str, T.Type]:
    """Refinements of either side; a name refined to two different types is dropped."""
    result = dict(a)
    for name, type_ in b.items():
        if name not in result:
            result[name] = type_
        elif result[name] != type_:
            del result[name]
    return result


def _intersection(a: dict[str, T.Type], b: dict[str, T.Type]) -> dict[str, T.Type]:
    return {name: type_ for name, type_ in a.items() if b.get(name) == type_}


class CondValue:
    """A condition: its bool Value, its refinements, and its value when known statically (`static_if`).

    A statically known condition (`x is None` for a None `x`, `torch.jit.is_scripting()`, a literal) compiles
    only the branch it selects, which is how code for absent submodules stays uncompiled.
    """

    def __init__(self, value: Value, refinements: RefinementSet | None = None, static_if: bool | None = None):
        self.value = value
        self.refinements = refinements or RefinementSet()
        self.static_if = static_if


# ==============================================================================================================
# the emitter
# ==============================================================================================================
NOT_IN_LOOP, IN_LOOP, IN_UNROLLED_LOOP = "not in loop", "in loop", "in unrolled loop"


class DefContext:
    """Per function being emitted: the declared return type and the type merged over the returns seen."""

    def __init__(self):
        self.declared_return_type: T.Type | None = None
        self.merged_return_type: T.Type | None = None


class FunctionEmitter:
    """Emits one function's graph (C++ `to_ir`); `emit()` returns its FunctionSchema."""

    def __init__(self, function: GraphFunction):
        self.function = function
        self.graph = function.graph
        self.resolver = function.resolver
        self.type_parser = ScriptTypeParser(function.resolver)
        self.environment: Environment | None = None
        self.def_stack: list[DefContext] = []
        self.exit_blocks: set[Block] = set()
        self.loop_status = NOT_IN_LOOP
        self.integral_constants: dict[int, Value] = {}
        self.fp_constants: dict[float, Value] = {}
        self.complex_constants: dict[complex, Value] = {}
        self.temp_name_count = 0

    def emit(self) -> FunctionSchema:
        definition = self.function.definition
        self.push_frame(self.graph.block, starts_def=True)
        if self.function.self_binding is not None and not definition.decl.params:
            raise CompileError("methods must have a self argument", definition.decl.range)
        schema = self.emit_def(definition, self.graph.block)
        convert_to_ssa(self.graph)
        run_cleanup_passes(self.graph)
        return schema

    # ---- frames ------------------------------------------------------------------------------------------------
    def push_frame(self, block: Block, starts_def: bool = False) -> None:
        if starts_def:
            self.def_stack.append(DefContext())
        self.environment = Environment(self, self.resolver, block, self.environment)

    def pop_frame(self, ends_def: bool = False) -> Environment:
        frame = self.environment
        self.environment = frame.next
        if ends_def:
            self.def_stack.pop()
        return frame

    @contextlib.contextmanager
    def loop_guard(self, status: str):
        previous, self.loop_status = self.loop_status, status
        try:
            yield
        finally:
            self.loop_status = previous

    def create_temp_name(self, prefix: str) -> str:
        name = f"{prefix}{self.temp_name_count}"
        self.temp_name_count += 1
        return name

    # ---- definitions -------------------------------------------------------------------------------------------
    def emit_def(self, definition: Def, block: Block) -> FunctionSchema:
        binding = self.function.self_binding
        schema = self.type_parser.parse_schema_from_def(definition, binding is not None, self.function.defaults)
        if len(schema.returns) == 1:
            self.def_stack[-1].declared_return_type = schema.returns[0].type
        arguments = self.emit_formal_arguments(definition, schema, block)
        self.emit_statements(definition.statements)
        self.handle_maybe_no_return(definition, block)
        returns = [self.emit_output(block)]
        return FunctionSchema(definition.name.name, "", arguments, returns)

    def emit_formal_arguments(self, definition: Def, schema: FunctionSchema, block: Block) -> list[Argument]:
        params = list(definition.decl.params)
        arguments: list[Argument] = []
        binding = self.function.self_binding
        if binding is not None:
            param = params.pop(0)
            value = block.add_input(param.ident.name)
            self.environment.set_sugared_var(param.ident.range, param.ident.name, binding.make_sugared(value),
                                             None)
            arguments.append(Argument(param.ident.name, value.type))
        for param, argument in zip(params, schema.arguments):
            name = param.ident.name
            value = block.add_input(name if meaningful_name(name) else None)
            value.set_type(argument.type)
            arguments.append(argument)
            self.environment.set_var(param.ident.range, name, value)
        return arguments

    def handle_maybe_no_return(self, definition: Def, block: Block) -> None:
        """A body that may fall off its end returns None; one that always raises takes the declared type."""
        context = self.def_stack[-1]
        if block not in self.exit_blocks:
            declared = context.declared_return_type
            if declared is not None and declared != T.NoneType.get():
                raise CompileError("Function was not annotated as having type None, but does not return along all "
                                   "paths", definition.range)
            with self.graph.insert_point_guard(block):
                self.emit_return(Return.create(definition.range))
        elif context.merged_return_type is None:
            context.merged_return_type = context.declared_return_type or T.NoneType.get()

    def emit_output(self, block: Block) -> Argument:
        # a placeholder until the exit transform routes the returned values to the block output
        return_type = self.def_stack[-1].merged_return_type
        block.register_output(insert_node(self.graph, prim.Uninitialized, [], return_type).output())
        return Argument("", return_type)

    # ---- statements --------------------------------------------------------------------------------------------
    def emit_statements(self, statements: list[Stmt]) -> None:
        for statement in statements:
            self.emit_statement(statement)
            if self.environment.block in self.exit_blocks:
                return  # the rest of the block is unreachable

    def emit_statement(self, statement: Stmt) -> None:
        emit = self._STATEMENTS.get(statement.kind)
        if emit is None:
            raise CompileError(f"Unrecognized statement kind {lx.kind_to_string(statement.kind)}",
                               statement.range)
        emit(self, statement)

    def emit_expr_statement(self, statement) -> None:
        self.emit_sugared_expr(statement.expr, 0)

    def emit_pass(self, statement) -> None:
        pass

    def emit_nested_def(self, statement: Def) -> None:
        from tsjit.frontend.closures import emit_nested_def  # breaks a real cycle: closures imports this module

        emit_nested_def(self, statement)

    def check_break_continue(self, loc, statement_name: str) -> None:
        if self.loop_status == NOT_IN_LOOP:
            raise CompileError(f"SyntaxError: '{statement_name}' outside loop", loc)
        if self.loop_status == IN_UNROLLED_LOOP:
            raise CompileError("Because we emit iteration over modulelists or tuples as unrolled loops, we do not "
                               "support break or continue inside the body of these loops", loc)

    def emit_break(self, statement: Break) -> None:
        self.check_break_continue(statement.range, "break")
        insert_node(self.graph, prim.BreakStmt, [], None, statement.range)

    def emit_continue(self, statement: Continue) -> None:
        self.check_break_continue(statement.range, "continue")
        insert_node(self.graph, prim.ContinueStmt, [], None, statement.range)

    def emit_delete(self, statement: Delete) -> None:
        for target in statement.targets:
            if isinstance(target, Subscript):
                self._delete_item(target)
            elif isinstance(target, Var):
                self.environment.remove_var(target.name.name, target.range, check_if_removed=True)
            else:
                raise CompileError("del statements are only supported for deleting list and dict items and "
                                   "variables", target.range)

    def _delete_item(self, target: Subscript) -> None:
        subscripts = target.subscript_exprs
        if isinstance(subscripts[0], SliceExpr):
            raise CompileError("del statements only support deletion at a single index, slicing is not supported "
                               "(see https://github.com/pytorch/pytorch/issues/31430)", target.range)
        container = self.emit_sugared_expr(target.value, 1)
        index = self.emit_expr(subscripts[0])
        value = container.as_value(target.value.range, self)
        if isinstance(value.type, T.ClassType):
            if "__delitem__" not in value.type.methods:
                raise CompileError("Class does not define __delitem__", target.range)
            MethodValue(value, ["__delitem__"]).call(target.range, self, [index], {}, 0)
        else:
            insert_node(self.graph, aten.Delete, [value, index], None, target.range)

    def emit_return(self, statement: Return) -> None:
        context = self.def_stack[-1]
        declared = context.declared_return_type
        result = self.emit_expr(statement.expr, declared)
        if declared is not None:
            result = self._convert_return(statement, result, declared)
            merged = declared
        else:
            previous = context.merged_return_type or result.type
            merged = T.unify_types(previous, result.type)
            if merged is None:
                raise CompileError(f"Previous return statement returned a value of type {previous.annotation_str()} "
                                   f"but this return statement returns a value of type "
                                   f"{result.type.annotation_str()}", statement.range)
        context.merged_return_type = merged
        if merged == T.AnyType.get() and result.type != T.AnyType.get():
            result = insert_unchecked_cast(self.graph, result, merged)
        insert_node(self.graph, prim.ReturnStmt, [result], None, statement.range)
        self.exit_blocks.add(self.environment.block)

    def _convert_return(self, statement: Return, result: Value, declared: T.Type) -> Value:
        # no implicit None -> Tensor conversion: a forgotten return must not become a tensor
        if not (result.type.is_subtype_of(T.TensorType.get()) and result.type.is_subtype_of(T.NoneType.get())):
            result = try_convert_to_type(self.graph, declared, result)
        if not result.type.is_subtype_of(declared):
            raise CompileError(f"Return value was annotated as having type {declared.annotation_str()} but is "
                               f"actually of type {result.type.annotation_str()}", statement.range)
        return result

    def emit_raise(self, statement: Raise) -> None:
        raised = self.emit_sugared_expr(statement.expr, 1)
        graph, loc = self.graph, statement.range
        if isinstance(raised, ExceptionMessageValue):
            message, qualified_name = raised.message, raised.qualified_name
        elif isinstance(raised, ExceptionValue):
            message, qualified_name = graph.insert_constant("", source_range=loc), None
        else:
            raise CompileError("exceptions must derive from BaseException", loc)
        if not message.type.is_subtype_of(T.StringType.get()):
            message = emit_builtin_call(graph, loc, aten.str, [message])
        if qualified_name is None:
            qualified_name = graph.insert_constant(None)
        emit_builtin_call(graph, loc, prim.RaiseException, [message, qualified_name])
        self.exit_blocks.add(self.environment.block)

    def emit_assert(self, statement: Assert) -> None:
        """`assert c, m` is `if c: pass else: raise AssertionError(m)`, so refinements of `c` hold after it."""
        loc = statement.range
        condition = self.emit_cond_expr(statement.test)
        message = statement.msg if statement.msg is not None else StringLiteral.create(loc, "")
        error = Apply.create(loc, Var.create(loc, Ident.create(loc, "AssertionError")), [message])
        self.emit_if_else_blocks(loc, condition, [], [Raise.create(loc, error)])

    # ---- if ----------------------------------------------------------------------------------------------------
    def emit_if(self, statement: If) -> None:
        condition = self.emit_cond_expr(statement.cond)
        self.emit_if_else_blocks(statement.range, condition, statement.true_branch, statement.false_branch)

    def emit_if_else_blocks(self, loc, condition: CondValue, true_branch: list[Stmt],
                            false_branch: list[Stmt]) -> None:
        if condition.static_if is not None:
            # a statically known condition compiles only the branch it selects
            refinements = condition.refinements if condition.static_if else condition.refinements.not_()
            self.insert_refinements(loc, refinements)
            self.emit_statements(true_branch if condition.static_if else false_branch)
            return
        node = insert_node(self.graph, prim.If, [condition.value], None, loc)
        true_block, false_block = node.add_block(), node.add_block()
        save_true = self.emit_single_if_branch(true_block, true_branch, condition.refinements)
        save_false = self.emit_single_if_branch(false_block, false_branch, condition.refinements.not_())
        true_exits, false_exits = true_block in self.exit_blocks, false_block in self.exit_blocks
        if true_exits and false_exits:
            self.exit_blocks.add(node.owning_block)
        mutated = self._mutated_variables(loc, save_true, save_false, true_block, false_block,
                                          true_exits, false_exits)
        for name in sorted(mutated):
            self._register_if_output(loc, name, save_true, save_false, true_block, false_block,
                                     true_exits, false_exits)

    def emit_single_if_branch(self, block: Block, branch: list[Stmt], refinements: RefinementSet) -> Environment:
        self.push_frame(block)
        with self.graph.insert_point_guard(block):
            self.insert_refinements(None, refinements)
            self.emit_statements(branch)
        return self.pop_frame()

    def _mutated_variables(self, loc, save_true: Environment, save_false: Environment, true_block: Block,
                           false_block: Block, true_exits: bool, false_exits: bool) -> set[str]:
        """Variables assigned in a branch that are defined after the if: assigned on every path that goes on.

        A variable defined in one branch only is not an error yet; using it later is (the message is kept).
        """
        mutated: set[str] = set()
        sides = ((save_true, save_false, false_block, false_exits, "false"),
                 (save_false, save_true, true_block, true_exits, "true"))
        for defined_in, other, other_block, other_exits, other_name in sides:
            for name in defined_in.defined_variables():
                with self.graph.insert_point_guard(other_block):
                    found = other.find_in_any_frame(name)
                if found is not None or other_exits:
                    mutated.add(name)
                    continue
                self.environment.set_variable_type_error(
                    name, _deferred_error(f"{name} is not defined in the {other_name} branch", loc))
        return mutated

    def _register_if_output(self, loc, name: str, save_true: Environment, save_false: Environment,
                            true_block: Block, false_block: Block, true_exits: bool, false_exits: bool) -> None:
        if true_exits and false_exits:
            return
        values = {}
        for block, frame, exits in ((true_block, save_true, true_exits), (false_block, save_false, false_exits)):
            if not exits:
                with self.graph.insert_point_guard(block):
                    values[block] = frame.get_var(name, loc)
        # the branch that exits gets an Uninitialized stand-in of the other branch's type
        for block, other in ((true_block, false_block), (false_block, true_block)):
            if block not in values:
                with self.graph.insert_point_guard(block):
                    values[block] = insert_node(self.graph, prim.Uninitialized, [], values[other].type).output()
                    store = insert_node(self.graph, prim.Store, [values[block]])
                    store.s_("name", name)
        true_type, false_type = values[true_block].type, values[false_block].type
        unified = T.unify_types(true_type, false_type, default_to_union=self._declared_union(name))
        if unified is None:
            message = (f"Type mismatch: {name} is set to type {true_type.annotation_str()} in the true branch and "
                       f"type {false_type.annotation_str()} in the false branch")
            if save_true.find_in_parent_frame(name) is not None or save_false.find_in_parent_frame(name):
                raise CompileError(message, loc)
            self.environment.set_variable_type_error(name, _deferred_error(message, loc))
            return
        self.environment.set_type(name, unified)

    def _declared_union(self, name: str) -> bool:
        """Whether `name` already holds a Union/Optional/number type, so branches may disagree within it."""
        found = self.environment.find_in_any_frame(name)
        if not isinstance(found, SimpleValue):
            return False
        return isinstance(found.value.type, T.UnionType | T.OptionalType | T.NumberType)

    # ---- conditions --------------------------------------------------------------------------------------------
    def emit_cond_expr(self, expr: Expr) -> CondValue:
        if expr.kind in (lx.TK_AND, lx.TK_OR):
            return self.emit_short_circuit_logical(expr.range, expr.lhs, expr.rhs, expr.kind == lx.TK_OR)
        if expr.kind == lx.TK_NOT:
            operand = self.emit_cond_expr(expr.operand)
            result = emit_builtin_call(self.graph, expr.range, aten.__not__, [operand.value])
            static = None if operand.static_if is None else not operand.static_if
            return CondValue(result, operand.refinements.not_(), static)
        if expr.kind in (lx.TK_IS, lx.TK_ISNOT):
            return self.emit_is(expr)
        special = self._special_condition(expr)
        if special is not None:
            return special
        result = self.emit_to_bool(expr.range, self.emit_expr(expr))
        static: bool | None = None
        if result.node.kind is aten.is_scripting:
            static = True
        elif result.node.kind is aten.has_torch_function:
            static = False
        constant = constant_of(result)
        if constant is not NOT_CONSTANT:
            static = bool(constant)
        return CondValue(result, RefinementSet(), static)

    def _special_condition(self, expr: Expr) -> CondValue | None:
        """`isinstance(...)` and `hasattr(...)` in a condition keep their refinements and static values."""
        if not isinstance(expr, Apply):
            return None
        if isinstance(expr.callee, Var) and expr.callee.name.name in ("isinstance", "hasattr"):
            self.check_apply_num_inputs(expr, 2)
            emit = self.emit_isinstance if expr.callee.name.name == "isinstance" else self.emit_hasattr
            return emit(expr.inputs[0], expr.inputs[1])
        callee = self.emit_sugared_expr(expr.callee, 1)
        if isinstance(callee, SpecialFormValue) and callee.form is prim.isinstance:
            self.check_apply_num_inputs(expr, 2)
            return self.emit_isinstance(expr.inputs[0], expr.inputs[1])
        return None

    def emit_is(self, expr) -> CondValue:
        """`a is b` / `a is not b`: decided statically when either side is surely None or surely not."""
        lhs, rhs = self.emit_expr(expr.lhs), self.emit_expr(expr.rhs)
        is_ = expr.kind == lx.TK_IS
        lhs_none, rhs_none = _can_be_none(lhs), _can_be_none(rhs)
        if lhs_none == ALWAYS and rhs_none == ALWAYS:
            return CondValue(self.graph.insert_constant(is_, source_range=expr.range), RefinementSet(), is_)
        if {lhs_none, rhs_none} == {ALWAYS, NEVER}:
            return CondValue(self.graph.insert_constant(not is_, source_range=expr.range), RefinementSet(), not is_)
        symbol = aten.__is__ if is_ else aten.__isnot__
        result = emit_builtin_call(self.graph, expr.range, symbol, [lhs, rhs])
        return CondValue(result, _is_none_refinements(expr.lhs, lhs, expr.rhs, rhs, is_))

    def emit_short_circuit_logical(self, loc, first: Expr, second: Expr, is_or: bool) -> CondValue:
        """`a or b` is `True if a else b`, `a and b` is `b if a else False`, as prim::If."""
        lhs = self.emit_cond_expr(first)
        rhs: list[CondValue] = []

        def constant() -> Value:
            return self.graph.insert_constant(is_or, source_range=loc)

        def continuation() -> Value:
            rhs.append(self.emit_cond_expr(second))
            return rhs[0].value

        if is_or:
            result = self.emit_if_expr(loc, lhs, constant, continuation)
            refinements = lhs.refinements.or_(rhs[0].refinements)
        else:
            result = self.emit_if_expr(loc, lhs, continuation, constant)
            refinements = lhs.refinements.and_(rhs[0].refinements)
        return CondValue(result, refinements, _short_circuit_static(lhs.static_if, rhs[0].static_if, is_or))

    def emit_if_expr(self, loc, condition: CondValue, true_expr: Callable[[], Value],
                     false_expr: Callable[[], Value]) -> Value:
        node = insert_node(self.graph, prim.If, [condition.value], None, loc)
        true_block, false_block = node.add_block(), node.add_block()
        for block, refinements, emit in ((true_block, condition.refinements, true_expr),
                                         (false_block, condition.refinements.not_(), false_expr)):
            self.push_frame(block)
            with self.graph.insert_point_guard(block):
                self.insert_refinements(loc, refinements)
                block.register_output(emit())
            self.pop_frame()
        true_type, false_type = true_block.outputs[0].type, false_block.outputs[0].type
        unified = T.unify_types(true_type, false_type)
        if unified is None:
            raise CompileError(f"if-expression's true branch has type {true_type.annotation_str()} but false branch "
                               f"has type {false_type.annotation_str()}", loc)
        return node.add_output(unified)

    def emit_to_bool(self, loc, value: Value) -> Value:
        try:
            cast = self.environment.get_sugared_var("bool", loc)
            result = cast.call(loc, self, [value], {}, 0).as_value(loc, self)
        except CompileError:
            raise CompileError(f"Could not cast value of type {value.type.annotation_str()} to bool", loc) from None
        if not result.type.is_subtype_of(T.BoolType.get()):
            raise CompileError(f"expected a bool expression for condition but found {result.type.annotation_str()}",
                               loc)
        return result

    def insert_refinements(self, loc, refinements: RefinementSet) -> None:
        for name, type_ in refinements.active().items():
            value = self.environment.get_var(name, loc)
            self.environment.set_var(loc, name, insert_unchecked_cast(self.graph, value, type_))

    def emit_hasattr(self, obj: Expr, attribute: Expr) -> CondValue:
        value = self.emit_sugared_expr(obj, 1)
        if not isinstance(attribute, StringLiteral):
            raise CompileError("hasattr's second argument must be a string literal", attribute.range)
        found = value.has_attr(obj.range, self, attribute.text)
        return CondValue(self.graph.insert_constant(found, source_range=obj.range), RefinementSet(), found)

    def emit_isinstance(self, obj: Expr, classinfo: Expr) -> CondValue:
        """`isinstance(x, T)`: static when x's type decides it; refines a variable x in the branches."""
        value = self.emit_expr(obj)
        candidates = self._gather_isinstance_types(classinfo)
        true_types, false_types, statically_true = T.isinstance_partition(value.type, candidates)
        true_refinements, false_refinements = {}, {}
        if isinstance(obj, Var):
            if true_types:
                true_refinements[obj.name.name] = T.unify_type_list(true_types, default_to_union=True)
            if false_types:
                false_refinements[obj.name.name] = T.unify_type_list(false_types, default_to_union=True)
        refinements = RefinementSet(true_refinements, false_refinements)
        if statically_true or not true_types:
            static = statically_true
            return CondValue(self.graph.insert_constant(static, source_range=obj.range), refinements, static)
        node = insert_node(self.graph, prim.isinstance, [value], T.BoolType.get(), obj.range)
        node.tys_("types", candidates)
        return CondValue(node.output(), refinements)

    def _gather_isinstance_types(self, classinfo: Expr) -> list[T.Type]:
        """The types of `isinstance(x, (A, B))`, flattened and in canonical Union order."""
        return list(_standardize_union(self._classinfo_types(classinfo)))

    def _classinfo_types(self, classinfo: Expr) -> list[T.Type]:
        if isinstance(classinfo, TupleLiteral):
            return [t for e in classinfo.inputs for t in self._classinfo_types(e)]
        return [self.type_parser.parse_type_from_expr(classinfo)]

    # ---- loops -------------------------------------------------------------------------------------------------
    def emit_loop_common(self, loc, emit_body: Callable[[], None], iterable: SugaredValue | None,
                         targets: list[Expr] | None, cond: Expr | None) -> None:
        """A prim::Loop with a condition block; convert_to_ssa adds the loop-carried values later:

            Loop(max_trip_count)          (for: the iterable's length; while: INT64_MAX)
              block0(%i): <targets = iterable[%i]> <body>
              block1(): <condition> -> (%cond)
        """
        if iterable is not None:
            trip_count = iterable.len(loc, self)
        else:
            trip_count = self.materialize_constant(INT64_MAX, loc, self.integral_constants)
        node = insert_node(self.graph, prim.Loop, [], None, loc)
        body = node.add_block()
        self._emit_loop_condition(loc, node, cond)
        node.add_input(trip_count)
        with self.loop_guard(IN_LOOP):
            counter = body.add_input()
            counter.set_type(T.IntType.get())
            self.push_frame(body)
            with self.graph.insert_point_guard(body):
                if iterable is not None and targets:
                    self._assign_loop_targets(loc, iterable, targets, counter)
                emit_body()
            self.pop_frame()

    def _emit_loop_condition(self, loc, node: Node, cond: Expr | None) -> None:
        condition_block = node.add_block()
        self.push_frame(condition_block)
        if cond is not None:
            with self.graph.insert_point_guard(condition_block):
                out = self.emit_to_bool(cond.range, self.emit_expr(cond))
        else:
            with self.graph.insert_point_guard(node):
                out = self.graph.insert_constant(True, source_range=loc)
        condition_block.register_output(out)
        self.pop_frame()

    def _assign_loop_targets(self, loc, iterable: SugaredValue, targets: list[Expr], counter: Value) -> None:
        element = iterable.getitem(loc, self, counter).as_value(loc, self)
        self.validate_assign_lhs(targets, loc)
        if len(targets) > 1:
            targets = [TupleLiteral.create(loc, targets)]
        self.emit_exprs_assign(targets, [SimpleValue(element)], loc, 1)

    def emit_unrolled_loop(self, loc, emit_body: Callable[[], None], iterable: SugaredValue,
                           targets: list[Expr]) -> None:
        """Loops over tuples and module lists repeat the body once per element, without a new frame, so
        each iteration may see different types."""
        with self.loop_guard(IN_UNROLLED_LOOP):
            for i in range(iterable.static_len()):
                index = self.materialize_constant(i, loc, self.integral_constants)
                item = iterable.getitem(loc, self, index)
                self.emit_exprs_assign(targets, [item], loc, 1)
                emit_body()

    def emit_for_loop(self, targets: list[Expr], iterables: list[Expr], loc, emit_body: Callable[[], None]) -> None:
        if len(iterables) != 1:
            raise CompileError("List of iterables is not supported currently", loc)
        iterable = self.emit_sugared_expr(iterables[0], 1).iter(loc, self)
        if iterable.should_emit_unrolled():
            self.emit_unrolled_loop(loc, emit_body, iterable, targets)
        else:
            self.emit_loop_common(loc, emit_body, iterable, targets, None)

    def emit_for(self, statement: For) -> None:
        self.emit_for_loop(statement.targets, statement.itrs, statement.range,
                           lambda: self.emit_statements(statement.body))

    def emit_while(self, statement: While) -> None:
        self.emit_loop_common(statement.range, lambda: self.emit_statements(statement.body), None, None,
                              statement.cond)

    # ---- with --------------------------------------------------------------------------------------------------
    def emit_with(self, statement: With) -> None:
        """`with obj as v:` -> `%v = prim::Enter(%obj)` ... `prim::Exit(%obj)` (exits in reverse order)."""
        entered: list[Value] = []
        for item in statement.targets:
            value = self.emit_expr(item.target)
            node = insert_node(self.graph, prim.Enter, [value], T.TensorType.get(), item.target.range)
            entered.append(value)
            node.output().set_type(self._check_context_manager(item.target, value))
            if item.var is not None:
                self.environment.set_var(item.var.range, item.var.name.name, node.output())
        self.emit_statements(statement.body)
        for value in reversed(entered):
            insert_node(self.graph, prim.Exit, [value], T.TensorType.get())

    def _check_context_manager(self, target: Expr, value: Value) -> T.Type:
        """The type `__enter__` returns, after checking the object is a context manager."""
        class_type = value.type
        if not isinstance(class_type, T.ClassType):
            raise CompileError("With item expression must return an object", target.range)
        enter, exit_ = class_type.methods.get("__enter__"), class_type.methods.get("__exit__")
        if enter is None or exit_ is None:
            raise CompileError("Object returned by with item expression does not define __enter__ and __exit__ "
                               "methods", target.range)
        if len(enter.schema.arguments) != 1:
            raise CompileError("__enter__ must have only one argument and one return value", target.range)
        if len(exit_.schema.arguments) != 4:
            raise CompileError("__exit__ must have four arguments", target.range)
        for i in range(1, 4):
            if exit_.schema.arguments[i].type != T.AnyType.get():
                raise CompileError(f"argument {i} of __exit__ must have Any type; TorchScript does not currently "
                                   "support passing exception type, value, or traceback to the __exit__ function.",
                                   target.range)
        return enter.schema.returns[0].type

    # ---- assignment --------------------------------------------------------------------------------------------
    def validate_assign_lhs(self, targets: list[Expr], loc) -> bool:
        """Targets are variables, subscripts, attributes, tuples and at most one starred; True if starred."""
        normal = starred = 0
        for target in targets:
            if target.kind in (lx.TK_VAR, lx.TK_SUBSCRIPT, lx.TK_TUPLE_LITERAL, "."):
                normal += 1
            elif target.kind == lx.TK_STARRED:
                starred += 1
            else:
                raise CompileError("lhs of assignment must be a variable, subscript, or starred expression",
                                   target.range)
        if starred > 1:
            raise CompileError("Only one starred expression is allowed on the lhs", loc)
        if starred and not normal:
            raise CompileError("A Starred expression may only appear on the lhs within the presence of another "
                               "non-starred expression", loc)
        return bool(starred)

    def emit_assignment(self, statement: Assign) -> None:
        if len(statement.lhs_list) == 1:
            return self.emit_single_assignment(statement)
        # a = b = expr(): expr is emitted once, then assigned from left to right
        name = self.create_temp_name("$tmp_assign_")
        rhs = statement.rhs
        self.environment.set_sugared_var(rhs.range, name, self.emit_sugared_expr(rhs, 1), None)
        temp = Var.create(rhs.range, Ident.create(rhs.range, name))
        for target in statement.lhs_list:
            self.emit_single_assignment(Assign.create(statement.range, [target], temp))
        return None

    def emit_single_assignment(self, statement: Assign) -> None:
        if statement.rhs is None:
            raise CompileError("For an assignment, expected an expression on the right-hand side", statement.range)
        lhs, rhs = statement.lhs, statement.rhs
        if isinstance(lhs, Var):
            type_ = self.type_parser.parse_type_from_expr(statement.type) if statement.type is not None else None
            value = self.emit_sugared_expr(rhs, 1, type_)
            self.environment.set_sugared_var(lhs.range, lhs.name.name, value, type_)
        elif isinstance(lhs, TupleLiteral):
            self.emit_tuple_assign(lhs, rhs)
        elif isinstance(lhs, Select):
            type_ = self.type_parser.parse_type_from_expr(statement.type) if statement.type is not None else None
            value = self.emit_sugared_expr(rhs, 1, type_).as_value(rhs.range, self)
            self.emit_sugared_expr(lhs.value, 1).set_attr(statement.range, self, lhs.selector.name, value)
        elif isinstance(lhs, Subscript):
            self.emit_subscript_assign(statement.range, lhs, self.emit_expr(rhs))
        else:
            raise CompileError("unexpected expression on left-hand side of assignment", lhs.range)

    def emit_tuple_assign(self, target: TupleLiteral, rhs: Expr) -> None:
        binders = len(target.inputs)
        starred = self.validate_assign_lhs(target.inputs, target.range)
        binders -= starred
        output = self.emit_sugared_expr(rhs, binders)
        self.emit_tuple_assign_from(target, output, rhs.range, binders, starred)

    def emit_tuple_assign_from(self, target: TupleLiteral, output: SugaredValue, rhs_loc, binders: int,
                               starred: bool) -> None:
        outputs = output.as_tuple(rhs_loc, self, None if starred else binders)
        if len(outputs) < binders:
            at_least = "at least " if starred else ""
            raise CompileError(f"need {at_least}{binders} values to unpack but found only {len(outputs)}",
                               target.range)
        if len(outputs) > binders and not starred:
            raise CompileError(f"too many values to unpack: need {binders} but found {len(outputs)}", target.range)
        self.emit_exprs_assign(target.inputs, outputs, rhs_loc, binders)

    def emit_exprs_assign(self, targets: list[Expr], outputs: list[SugaredValue], rhs_loc, binders: int) -> None:
        i = 0
        for target in targets:
            if isinstance(target, Subscript):
                self.emit_subscript_assign(rhs_loc, target, outputs[i].as_value(rhs_loc, self))
            elif isinstance(target, Var):
                self.environment.set_sugared_var(target.range, target.name.name, outputs[i], None)
            elif isinstance(target, Starred):
                i = self._assign_starred(target, outputs, i, binders) - 1
            elif isinstance(target, TupleLiteral):
                starred = self.validate_assign_lhs(target.inputs, target.range)
                self.emit_tuple_assign_from(target, outputs[i], rhs_loc, len(target.inputs) - starred, starred)
            elif isinstance(target, Select):
                value = outputs[i].as_value(rhs_loc, self)
                self.emit_sugared_expr(target.value, 1).set_attr(rhs_loc, self, target.selector.name, value)
            else:
                raise CompileError("unexpected expression on the left-hand side", target.range)
            i += 1

    def _assign_starred(self, target: Starred, outputs: list[SugaredValue], i: int, binders: int) -> int:
        """`a, *rest = t`: `rest` gets a tuple of the values not bound to other targets."""
        var = target.expr
        if not isinstance(var, Var):
            raise CompileError("Cannot pack a tuple into a non-variable", var.range)
        matched = len(outputs) - binders
        values = [v.as_value(target.range, self) for v in outputs[i:i + matched]]
        self.environment.set_var(var.range, var.name.name, create_tuple(self.graph, values))
        return i + matched

    def emit_subscript_assign(self, loc, lhs: Subscript, rhs: Value) -> None:
        container = self.emit_expr(lhs.value)
        if container.type.is_subtype_of(T.TensorType.get()):
            return self._tensor_subscript_assign(loc, lhs, container, rhs)
        subscripts = lhs.subscript_exprs
        if len(subscripts) != 1 or isinstance(subscripts[0], SliceExpr):
            raise CompileError("Sliced expression not yet supported for subscripted assignment. File a bug if you "
                               "want this", lhs.range)
        if container.type.is_subtype_of(T.AnyTupleType.get()):
            raise CompileError(f"{container.type.annotation_str()} does not support subscripted assignment", lhs.range)
        index = self.emit_expr(subscripts[0])
        _magic("__setitem__", aten._set_item).call(loc, self, [container, index, rhs], {}, 0)
        return None

    def _tensor_subscript_assign(self, loc, lhs: Subscript, container: Value, rhs: Value) -> None:
        """`x[i, 1:] = v` is `x.select(..).slice(..).copy_(v)`; with tensor indices, `index_put_`."""
        sliced, tensor_indices = self.emit_int_and_slice_indexing(lhs.range, container, lhs.subscript_exprs)
        rhs = self.emit_value_to_tensor(rhs, sliced)
        if not tensor_indices:
            emit_builtin_call(self.graph, loc, aten.copy_, [sliced, rhs])
            return
        indices = create_list(self.graph, T.OptionalType(T.TensorType.get()), tensor_indices)
        emit_builtin_call(self.graph, loc, aten.index_put_, [sliced, indices, rhs])

    def emit_value_to_tensor(self, value: Value, like: Value) -> Value:
        """A number assigned into a tensor becomes a tensor of that tensor's dtype and device."""
        if not isinstance(value.type, T.NumberType | T.IntType | T.BoolType | T.FloatType | T.ComplexType):
            return value
        graph = self.graph
        dtype = emit_builtin_call(graph, None, prim.dtype, [like])
        device = emit_builtin_call(graph, None, prim.device, [like])
        return emit_builtin_call(graph, None, aten.tensor, [value], {"dtype": dtype, "device": device})

    def emit_aug_assignment(self, statement: AugAssign) -> None:
        lhs = statement.lhs
        if isinstance(lhs, Var):
            result = self.emit_aug_assignment_helper(statement, self.emit_expr(lhs))
            self.environment.set_var(lhs.range, lhs.name.name, result)
        elif isinstance(lhs, Select):
            owner = self.emit_sugared_expr(lhs.value, 1)
            current = owner.attr(lhs.range, self, lhs.selector.name).as_value(lhs.range, self)
            owner.set_attr(statement.range, self, lhs.selector.name, self.emit_aug_assignment_helper(statement,
                                                                                                      current))
        elif isinstance(lhs, Subscript):
            self.emit_aug_assignment_to_subscript(statement)
        else:
            raise CompileError("unexpected expression on left-hand side of augmented assignment", lhs.range)

    def emit_aug_assignment_helper(self, statement: AugAssign, lhs: Value) -> Value:
        if isinstance(lhs.type, T.ClassType):
            return self._aug_assign_class(statement, lhs)
        rhs = self.emit_expr(statement.rhs)
        return emit_builtin_call(self.graph, statement.range, aug_op(statement, lhs.type), [lhs, rhs])

    def _aug_assign_class(self, statement: AugAssign, lhs: Value) -> Value:
        in_place, out_of_place = AUG_MAGIC_METHODS.get(statement.aug_op, (None, None))
        if in_place is None:
            raise CompileError(f"Unknown augmented assignment: {lx.kind_to_string(statement.aug_op)}", statement.range)
        rhs = self.emit_expr(statement.rhs)
        methods = lhs.type.methods
        name = in_place if in_place in methods else out_of_place if out_of_place in methods else None
        if name is None:
            raise CompileError(f"Cannot emit inplace op on {lhs.type.annotation_str()} since it does not define an "
                               f"{in_place} or {out_of_place} method", statement.range)
        return MethodValue(lhs, [name]).call(statement.range, self, [rhs], {}, 0).as_value(statement.range, self)

    def emit_aug_assignment_to_subscript(self, statement: AugAssign) -> None:
        lhs: Subscript = statement.lhs
        container = self.emit_expr(lhs.value)
        graph = self.graph
        if not container.type.is_subtype_of(T.TensorType.get()):
            return self._aug_assign_item(statement, lhs, container)
        sliced, tensor_indices = self.emit_int_and_slice_indexing(lhs.range, container, lhs.subscript_exprs)
        rhs = self.emit_expr(statement.rhs)
        op = aug_op(statement, container.type)
        if not tensor_indices:
            emit_builtin_call(graph, statement.range, op, [rhs], {}, sliced)
            return None
        indices = create_list(graph, T.OptionalType(T.TensorType.get()), tensor_indices)
        indexed = emit_builtin_call(graph, statement.range, aten.index, [sliced, indices])
        augmented = emit_builtin_call(graph, statement.range, op, [rhs], {}, indexed)
        emit_builtin_call(graph, statement.range, aten.index_put_, [sliced, indices, augmented])
        return None

    def _aug_assign_item(self, statement: AugAssign, lhs: Subscript, container: Value) -> None:
        """`l[i] += v` on a list or dict: get the item, augment it, set it back."""
        subscripts = lhs.subscript_exprs
        container_type = container.type
        if len(subscripts) != 1:
            raise CompileError(f"Sliced expression not yet supported for {container_type.annotation_str()} "
                               "augmented assignment. File a bug if you want this", lhs.range)
        element_type = container_type.elem if isinstance(container_type, T.ListType) else (
            container_type.key if isinstance(container_type, T.DictType) else None)
        if element_type is None:
            raise CompileError(f"{container_type.annotation_str()} does not support augmented assignment.",
                               lhs.range)
        graph, loc = self.graph, statement.range
        index = self.emit_expr(subscripts[0])
        value = self.emit_expr(statement.rhs)
        item = emit_builtin_call(graph, loc, aten.__getitem__, [container, index])
        augmented = emit_builtin_call(graph, loc, aug_op(statement, element_type), [item, value])
        emit_builtin_call(graph, loc, aten._set_item, [container, index, augmented])

    # ---- expressions -------------------------------------------------------------------------------------------
    def emit_expr(self, expr: Expr, type_hint: T.Type | None = None) -> Value:
        value = self.emit_sugared_expr(expr, 1, type_hint).as_value(expr.range, self)
        if type_hint == T.AnyType.get() and value.type != T.AnyType.get():
            value = insert_unchecked_cast(self.graph, value, type_hint)
        return value

    def emit_sugared_expr(self, expr: Expr, n_binders: int, type_hint: T.Type | None = None) -> SugaredValue:
        if isinstance(expr, Var):
            return self.environment.get_sugared_var(expr.name.name, expr.range)
        if isinstance(expr, Select):
            value = self.emit_sugared_expr(expr.value, 1)
            return value.attr(expr.range, self, expr.selector.name)
        if isinstance(expr, Apply):
            return self.emit_apply_expr(expr, n_binders, type_hint)
        if isinstance(expr, Subscript):
            return self.emit_subscript(expr, type_hint)
        return SimpleValue(self.emit_simple_expr(expr, type_hint))

    def emit_simple_expr(self, expr: Expr, type_hint: T.Type | None = None) -> Value:
        emit = self._SIMPLE_EXPRESSIONS.get(expr.kind)
        if emit is None:
            raise CompileError(f"Cannot emit expr for: {expr}", expr.range)
        return emit(self, expr, type_hint)

    def emit_builtin_operator(self, expr: Expr, type_hint: T.Type | None = None) -> Value:
        """`a // b` and `a @ b`: plain builtin calls (no magic methods)."""
        values = [self.emit_expr(e) for e in (expr.lhs, expr.rhs)]
        return emit_builtin_call(self.graph, expr.range, BINARY_OPERATORS[expr.kind][0], values)

    def emit_modulo(self, expr: Expr, type_hint: T.Type | None = None) -> Value:
        """`"%d" % x` formats a string (aten::percentFormat); otherwise `%` is the remainder."""
        lhs = self.emit_sugared_expr(expr.lhs, 0).as_value(expr.lhs.range, self)
        if lhs.type != T.StringType.get():
            return self.emit_binary_op(expr, lhs=lhs)
        rhs = self.emit_expr(expr.rhs)
        return insert_node(self.graph, aten.percentFormat, [lhs, rhs], T.StringType.get(), expr.range).output()

    def emit_binary_op(self, expr: Expr, type_hint: T.Type | None = None, lhs: Value | None = None) -> Value:
        symbol, magic = BINARY_OPERATORS[expr.kind]
        values = [lhs if lhs is not None else self.emit_expr(expr.lhs), self.emit_expr(expr.rhs)]
        if expr.kind == lx.TK_IN:
            values.reverse()  # `a in b` is b.__contains__(a)
        if symbol is aten.add and all(isinstance(v.type, T.TupleType) for v in values):
            elements = tuple_elements(self.graph, values[0]) + tuple_elements(self.graph, values[1])
            return create_tuple(self.graph, elements)
        return _magic(magic, symbol).call(expr.range, self, values, {}, 0).as_value(expr.range, self)

    def emit_cond_value(self, expr: Expr, type_hint: T.Type | None = None) -> Value:
        return self.emit_cond_expr(expr).value

    def emit_unary_op(self, expr: Expr, type_hint: T.Type | None = None) -> Value:
        """`-x` and `~x`; on a constant the result is folded into a constant."""
        magic, symbol = UNARY_OPERATORS[expr.kind]
        operand = self.emit_expr(expr.operand)
        value = _magic(magic, symbol).call(expr.range, self, [operand], {}, 0).as_value(expr.range, self)
        if value.node.kind is not symbol:
            return value
        folded = run_node_if_inputs_are_constant(value.node)
        if folded is None:
            return value
        return self.graph.insert_constant(folded[0], source_range=expr.range)

    def emit_starred_error(self, expr: Expr, type_hint: T.Type | None = None) -> Value:
        raise CompileError("Unexpected starred expansion. File a bug report", expr.range)

    def emit_const(self, expr: Const, type_hint: T.Type | None = None) -> Value:
        if expr.is_floating_point:
            return self.materialize_constant(expr.value, expr.range, self.fp_constants)
        if expr.is_complex:
            return self.materialize_constant(expr.value, expr.range, self.complex_constants)
        return self.materialize_constant(expr.value, expr.range, self.integral_constants)

    def materialize_constant(self, value: Any, loc, cache: dict) -> Value:
        """Number literals: one constant per value and function, placed at the start of the graph."""
        if value in cache:
            return cache[value]
        front = next(iter(self.graph.nodes()), self.graph.return_node)
        with self.graph.insert_point_guard(front):
            cache[value] = self.graph.insert_constant(value, source_range=loc)
        return cache[value]

    def emit_literal(self, expr: Expr, type_hint: T.Type | None = None) -> Value:
        value = {lx.TK_TRUE: True, lx.TK_FALSE: False, lx.TK_NONE: None}[expr.kind]
        return self.graph.insert_constant(value, source_range=expr.range)

    def emit_string_literal(self, expr: StringLiteral, type_hint: T.Type | None = None) -> Value:
        return self.graph.insert_constant(expr.text, source_range=expr.range)

    def emit_ternary_if(self, expr: TernaryIf, type_hint: T.Type | None = None) -> Value:
        condition = self.emit_cond_expr(expr.cond)
        if condition.static_if is not None:
            return self.emit_expr(expr.true_expr if condition.static_if else expr.false_expr, type_hint)
        return self.emit_if_expr(expr.range, condition, lambda: self.emit_expr(expr.true_expr, type_hint),
                                 lambda: self.emit_expr(expr.false_expr, type_hint))

    def emit_tuple_literal(self, expr: TupleLiteral, type_hint: T.Type | None = None) -> Value:
        return create_tuple(self.graph, self.get_values(expr.inputs, maybe_unpack=True))

    def emit_list_literal(self, expr: ListLiteral, type_hint: T.Type | None = None) -> Value:
        values = self.get_values(expr.inputs, maybe_unpack=True)
        element_type, union_hint = self._list_element_type(expr, values, type_hint)
        result = create_list(self.graph, element_type, values)
        return insert_unchecked_cast(self.graph, result, union_hint) if union_hint is not None else result

    def _list_element_type(self, expr: Expr, values: list[Value], type_hint: T.Type | None
                           ) -> tuple[T.Type, T.Type | None]:
        """The element type of a list literal: from a List[T] hint, else the unified element types, else Tensor.

        A Union hint holding one list type selects it; the literal is then cast back to the Union.
        """
        list_hint, union_hint = _refine_container_hint(expr, type_hint, T.ListType, "List")
        hinted = list_hint.elem if list_hint is not None else None
        if not values:
            return (hinted or T.TensorType.get()), union_hint
        unified = T.unify_type_list([v.type for v in values], default_to_union=True, type_hint=hinted)
        if hinted is None:
            if isinstance(unified, T.UnionType):
                warnings.warn(f"List consists of heterogeneous types, which means that it has been typed as "
                              f"containing {unified.annotation_str()}. To use any of the values in this List, it "
                              "will be necessary to add an `assert isinstance` statement before first use to trigger "
                              f"type refinement.\n{expr.range.highlight()}", stacklevel=2)
            return unified, union_hint
        if not unified.is_subtype_of(hinted):
            raise CompileError(f"List type annotation `{list_hint.annotation_str()}` did not match the types of the "
                               f"given list elements, which were unified to {unified.annotation_str()}", expr.range)
        return hinted, union_hint

    def emit_dict_literal(self, expr: DictLiteral, type_hint: T.Type | None = None) -> Value:
        keys, values, value_type = [], [], None
        for key_expr, value_expr in zip(expr.key_inputs, expr.value_inputs):
            keys.append(self.emit_expr(key_expr))
            values.append(self.emit_expr(value_expr))
            if len(keys) > 1 and type(keys[-2].type) is not type(keys[-1].type):
                raise CompileError(f"Dict keys must contain only a single type. Expected: "
                                   f"{keys[-2].type.annotation_str()} but found {keys[-1].type.annotation_str()} "
                                   "instead", key_expr.range)
            value_type = values[-1].type if value_type is None else T.unify_types(value_type, values[-1].type,
                                                                                   default_to_union=True)
        dict_type, union_hint = self._dict_type(expr, keys, value_type, type_hint)
        graph = self.graph
        inputs = [v for pair in zip(keys, values) for v in pair]
        result = insert_node(graph, prim.DictConstruct, inputs, dict_type).output()
        return insert_unchecked_cast(graph, result, union_hint) if union_hint is not None else result

    def _dict_type(self, expr: DictLiteral, keys: list[Value], value_type: T.Type | None,
                   type_hint: T.Type | None) -> tuple[T.DictType, T.Type | None]:
        dict_hint, union_hint = _refine_container_hint(expr, type_hint, T.DictType, "Dict")
        if dict_hint is None:
            if not keys:
                return T.DictType(T.StringType.get(), T.TensorType.get()), union_hint
            return T.DictType(keys[0].type, value_type), union_hint
        if keys and dict_hint.key != keys[0].type:
            raise CompileError(f"Type annotation was inferred to be {dict_hint.annotation_str()}but the type of keys "
                               f"given by the dict literal is {keys[0].type.annotation_str()}", expr.range)
        if keys and not value_type.is_subtype_of(dict_hint.value):
            raise CompileError(f"Type annotation was inferred to be `{dict_hint.annotation_str()}`, but the type of "
                               f"values given by the dict literal is {value_type.annotation_str()}", expr.range)
        return dict_hint, union_hint

    def emit_list_comprehension(self, comprehension: ListComp, type_hint: T.Type | None = None) -> Value:
        """`[elt for target in iter if c]`: an empty list appended to in a loop (under an if, with conditions), in
        its own variable scope."""
        loc, graph = comprehension.range, self.graph
        result = insert_node(graph, prim.ListConstruct, [], T.ListType(T.TensorType.get())).output()
        list_hint, _ = _refine_container_hint(comprehension, type_hint, T.ListType, "List")
        if list_hint is not None:
            result.set_type(list_hint)
        scope = insert_node(graph, prim.ComprehensionScope, [], None, loc).add_block()
        seen_first: list[bool] = []

        def emit_body() -> None:
            element = self.emit_expr(comprehension.elt)
            if not seen_first:
                result.set_type(T.ListType(element.type))
                seen_first.append(True)
            unified = T.unify_types(result.type.elem, element.type, default_to_union=True,
                                    type_hint=list_hint.elem if list_hint is not None else None)
            if list_hint is not None and not unified.is_subtype_of(list_hint.elem):
                raise CompileError(f"List type annotation `{list_hint.annotation_str()}` did not match the types of "
                                   f"the given list elements, which were unified to {unified.annotation_str()}", loc)
            result.set_type(list_hint if list_hint is not None else T.ListType(unified))
            element.set_type(result.type.elem)
            emit_builtin_call(graph, loc, aten.append, [element], {}, result)

        self._emit_comprehension(scope, comprehension, loc, emit_body)
        return result

    def _emit_comprehension(self, scope: Block, comprehension: ListComp | DictComp, loc, emit_body) -> None:
        self.push_frame(scope)
        with self.graph.insert_point_guard(scope):
            self.emit_for_loop([comprehension.target], [comprehension.iter], loc,
                               lambda: self._emit_if_all(loc, comprehension.conditions, emit_body))
        self.pop_frame()

    def _emit_if_all(self, loc, conditions: list[Expr], emit_body: Callable[[], None]) -> None:
        """`emit_body` under the comprehension's conditions, one prim::If each, as Python tests them: in order,
        each only where the ones before held. The body assigns no variables, so the ifs have no outputs.

            [x for x in xs if x > 0]  ->  prim::Loop(...) block: %c = aten::gt(%x, 0); prim::If(%c) block0: append
        """
        if not conditions:
            emit_body()
            return
        condition = self.emit_cond_expr(conditions[0])
        if condition.static_if is not None:
            self.insert_refinements(loc, condition.refinements if condition.static_if else condition.refinements.not_())
            if condition.static_if:
                self._emit_if_all(loc, conditions[1:], emit_body)
            return
        node = insert_node(self.graph, prim.If, [condition.value], None, loc)
        true_block = node.add_block()
        node.add_block()
        self.push_frame(true_block)
        with self.graph.insert_point_guard(true_block):
            self.insert_refinements(loc, condition.refinements)
            self._emit_if_all(loc, conditions[1:], emit_body)
        self.pop_frame()

    def emit_dict_comprehension(self, comprehension: DictComp, type_hint: T.Type | None = None) -> Value:
        loc, graph = comprehension.range, self.graph
        result = insert_node(graph, prim.DictConstruct, [], T.DictType(T.StringType.get(), T.TensorType.get()))
        result = result.output()
        dict_hint, _ = _refine_container_hint(comprehension, type_hint, T.DictType, "Dict")
        if dict_hint is not None:
            result.set_type(dict_hint)
        scope = insert_node(graph, prim.ComprehensionScope, [], None, loc).add_block()

        def emit_body() -> None:
            key, value = self.emit_expr(comprehension.key), self.emit_expr(comprehension.value)
            result.set_type(dict_hint if dict_hint is not None else T.DictType(key.type, value.type))
            emit_builtin_call(graph, loc, aten._set_item, [result, key, value])

        self._emit_comprehension(scope, comprehension, loc, emit_body)
        return result

    # ---- calls -------------------------------------------------------------------------------------------------
    def get_values(self, exprs: list[Expr], maybe_unpack: bool, for_call: bool = False) -> list:
        """Argument values; `*t` expands a tuple. In calls an empty `[]` stays a Python list, so overload
        matching gives it whatever list type the argument wants (TorchScript's EmptyListLiteral)."""
        values: list = []
        for expr in exprs:
            if maybe_unpack and isinstance(expr, Starred):
                items = self.emit_sugared_expr(expr.expr, 1).as_tuple(expr.range, self)
                values.extend(item.as_value(expr.range, self) for item in items)
            elif for_call and isinstance(expr, ListLiteral) and not expr.inputs:
                values.append([])
            else:
                values.append(self.emit_expr(expr))
        return values

    def emit_attributes(self, attributes) -> dict[str, Any]:
        return {a.name.name: self._call_argument(a.value) for a in attributes}

    def _call_argument(self, expr: Expr) -> Any:
        if isinstance(expr, ListLiteral) and not expr.inputs:
            return []
        return self.emit_expr(expr)

    def check_apply_num_inputs(self, apply: Apply, expected: int) -> None:
        name = apply.callee.name.name if isinstance(apply.callee, Var) else str(apply.callee)
        if len(apply.inputs) != expected:
            raise CompileError(f"{name} expected exactly {expected} arguments but found {len(apply.inputs)}",
                               apply.range)
        if apply.attributes:
            raise CompileError(f"{name} takes no keyword arguments", apply.range)

    def emit_apply_expr(self, apply: Apply, n_binders: int, type_hint: T.Type | None = None) -> SugaredValue:
        callee = self.emit_sugared_expr(apply.callee, 1)
        if isinstance(callee, SpecialFormValue):
            return self.emit_apply_special_form(callee.form, apply, type_hint)
        args = self.get_values(apply.inputs, maybe_unpack=True, for_call=True)
        kwargs = self.emit_attributes(apply.attributes)
        return callee.call(apply.callee.range, self, args, kwargs, n_binders)

    def emit_apply_special_form(self, form: Symbol, apply: Apply, type_hint: T.Type | None) -> SugaredValue:
        from tsjit.frontend import special_forms  # breaks a real cycle: special_forms -> closures -> ir_emitter

        emit = special_forms.SPECIAL_FORMS.get(form)
        if emit is None:
            raise CompileError(f"{form.name}() is not supported in TorchScript yet", apply.range)
        return emit(self, apply, type_hint)

    # ---- subscripts --------------------------------------------------------------------------------------------
    def emit_subscript(self, subscript: Subscript, type_hint: T.Type | None = None) -> SugaredValue:
        container = self.emit_sugared_expr(subscript.value, 1)
        subscripts, loc, value_loc = subscript.subscript_exprs, subscript.range, subscript.value.range
        if len(subscripts) != 1:
            return SimpleValue(self.emit_multidim_slicing(loc, container.as_value(value_loc, self), subscripts))
        if isinstance(subscripts[0], SliceExpr):
            if container.kind() == "module":
                return SimpleValue(self._slice_module_list(container, subscripts[0], value_loc))
            return SimpleValue(self.emit_basic_slice(loc, container.as_value(value_loc, self), subscripts))
        value = container.as_value(value_loc, self) if container.kind() != "module" else None
        index = self.emit_sugared_expr(subscripts[0], 1)
        if isinstance(index, SliceValue):
            dim = self.graph.insert_constant(0, source_range=value_loc) if _is_tensor(value) else None
            return SimpleValue(self.emit_slice_op(value_loc, value, dim, index.start, index.stop, index.step))
        index_value = index.as_value(value_loc, self)
        if value is not None and isinstance(value.type, T.TupleType):
            return SimpleValue(self.emit_tuple_index(loc, value, index_value))
        if _is_tensor(value):
            return SimpleValue(self.emit_multidim_slicing(loc, value, subscripts))
        return container.getitem(loc, self, index_value, type_hint)

    def _slice_module_list(self, container: SugaredValue, slice_expr: SliceExpr, value_loc) -> Value:
        tuple_value = container.as_tuple_value(value_loc, self).as_value(value_loc, self)
        start = self.emit_expr(slice_expr.start_or(0))
        end = self.emit_expr(slice_expr.end) if slice_expr.end is not None else None
        return self.emit_tuple_slice(value_loc, tuple_value, start, end, None)

    def emit_basic_slice(self, loc, sliceable: Value, subscripts: list[Expr]) -> Value:
        dim = self.graph.insert_constant(0, source_range=loc) if _is_tensor(sliceable) else None
        return self.emit_slice(loc, sliceable, dim, subscripts[0])

    def emit_slice(self, loc, sliceable: Value, dim: Value | None, slice_expr: SliceExpr) -> Value:
        start, end, step = (self.emit_expr(part) if part is not None else None
                            for part in (slice_expr.start, slice_expr.end, slice_expr.step))
        return self.emit_slice_op(loc, sliceable, dim, start, end, step)

    def emit_slice_op(self, loc, sliceable: Value, dim: Value | None, start, end, step) -> Value:
        """`aten::slice(self, [dim,] start, end, step)`; missing bounds are None, a missing step is 1."""
        if isinstance(sliceable.type, T.TupleType):
            return self.emit_tuple_slice(loc, sliceable, start, end, step)
        if step is None:
            step = self.graph.insert_constant(1, source_range=loc)
        args = [sliceable] + ([dim] if dim is not None else [])
        keywords = {"start": start, "end": end, "step": step}
        return emit_builtin_call(self.graph, loc, aten.slice, args, keywords)

    def emit_tuple_index(self, loc, tuple_value: Value, index: Value) -> Value:
        elements = tuple_value.type.elements
        if index.type != T.IntType.get():
            raise CompileError("tuple index must be an integer", loc)
        position = constant_of(index)
        if position is NOT_CONSTANT:
            # a variable index needs a homogeneous tuple, whose element type is then known
            if not elements or not all(e.is_subtype_of(elements[0]) for e in elements):
                raise CompileError(f"Cannot index into a {tuple_value.type.annotation_str()} with a non-integer "
                                   "literal because we cannot resolve the output type", loc)
            output_type = elements[0]
        else:
            output_type = elements[_tuple_position(loc, tuple_value.type, position, allow_out_of_bounds=False)]
        return insert_node(self.graph, prim.TupleIndex, [tuple_value, index], output_type).output()

    def emit_tuple_slice(self, loc, tuple_value: Value, start, end, step) -> Value:
        """`t[a:b:c]` on a tuple: constant bounds, the selected elements as a new tuple."""
        tuple_type = tuple_value.type
        step_size = _constant_int(step, loc, "Step size should always be an integer") if step is not None else 1
        bounds = [_tuple_position(loc, tuple_type, _constant_int(v, loc), allow_out_of_bounds=True)
                  if v is not None else None for v in (start, end)]
        positions = range(len(tuple_type.elements))[slice(bounds[0], bounds[1], step_size)]
        graph = self.graph
        elements = []
        for i in positions:
            index = graph.insert_constant(i)
            elements.append(insert_node(graph, prim.TupleIndex, [tuple_value, index], tuple_type.elements[i]).output())
        return create_tuple(graph, elements)

    def emit_multidim_slicing(self, loc, sliceable: Value, subscripts: list[Expr]) -> Value:
        if not _is_tensor(sliceable):
            raise CompileError("Unsupported operation: attempted to use multidimensional indexing on a non-tensor "
                               "type", loc)
        sliced, tensor_indices = self.emit_int_and_slice_indexing(loc, sliceable, subscripts)
        if not tensor_indices:
            return sliced
        return self.emit_index(loc, sliced, tensor_indices)

    def emit_index(self, loc, value: Value, indices: list[Value]) -> Value:
        index_list = create_list(self.graph, T.OptionalType(T.TensorType.get()), indices)
        return emit_builtin_call(self.graph, loc, aten.index, [value, index_list])

    def emit_int_and_slice_indexing(self, loc, sliceable: Value, subscripts: list[Expr]
                                    ) -> tuple[Value, list[Value]]:
        return emit_int_and_slice_indexing(self, loc, sliceable, subscripts)

    # ---- dispatch tables ---------------------------------------------------------------------------------------
    _STATEMENTS = {
        lx.TK_IF: emit_if, lx.TK_WHILE: emit_while, lx.TK_FOR: emit_for, lx.TK_ASSIGN: emit_assignment,
        lx.TK_AUG_ASSIGN: emit_aug_assignment, lx.TK_EXPR_STMT: emit_expr_statement, lx.TK_RAISE: emit_raise,
        lx.TK_ASSERT: emit_assert, lx.TK_RETURN: emit_return, lx.TK_CONTINUE: emit_continue,
        lx.TK_BREAK: emit_break, lx.TK_PASS: emit_pass, lx.TK_DEF: emit_nested_def, lx.TK_DELETE: emit_delete,
        lx.TK_WITH: emit_with,
    }


# ==============================================================================================================
# operator tables
# ==============================================================================================================
BINARY_OPERATORS: dict[str, tuple[Symbol, str]] = {
    "+": (aten.add, "__add__"), "-": (aten.sub, "__sub__"), "*": (aten.mul, "__mul__"),
    lx.TK_POW: (aten.pow, "__pow__"), "/": (aten.div, "__truediv__"), "%": (aten.remainder, "__mod__"),
    lx.TK_NE: (aten.ne, "__ne__"), lx.TK_EQ: (aten.eq, "__eq__"), "<": (aten.lt, "__lt__"),
    ">": (aten.gt, "__gt__"), lx.TK_LE: (aten.le, "__le__"), lx.TK_GE: (aten.ge, "__ge__"),
    "&": (aten.__and__, "__and__"), "|": (aten.__or__, "__or__"), "^": (aten.__xor__, "__xor__"),
    lx.TK_IN: (aten.__contains__, "__contains__"), lx.TK_LSHIFT: (aten.__lshift__, "__lshift__"),
    lx.TK_RSHIFT: (aten.__rshift__, "__rshift__"), lx.TK_FLOOR_DIV: (aten.floordiv, ""),
    "@": (aten.matmul, ""),
}
UNARY_OPERATORS = {lx.TK_UNARY_MINUS: ("__neg__", aten.neg), "~": ("__invert__", aten.bitwise_not)}
AUG_MAGIC_METHODS = {"+": ("__iadd__", "__add__"), "-": ("__isub__", "__sub__"),
                     "/": ("__itruediv__", "__truediv__"), "*": ("__imul__", "__mul__"), "%": ("__imod__", "__mod__")}
# augmented assignment: (in-place op for tensors and lists, op otherwise)
AUG_OPERATORS = {
    "+": (aten.add_, aten.add), "-": (aten.sub_, aten.sub), "/": (aten.div_, aten.div), "*": (aten.mul_, aten.mul),
    "%": (aten.fmod_, aten.fmod), "|": (aten.bitwise_or, aten.__or__), "&": (aten.bitwise_and, aten.__and__),
    "^": (aten.bitwise_xor, aten.__xor__), lx.TK_LSHIFT: (aten.__lshift__, aten.__lshift__),
    lx.TK_RSHIFT: (aten.__irshift__, aten.__rshift__), lx.TK_POW: (aten.pow, aten.pow),
}


def aug_op(statement: AugAssign, type_: T.Type) -> Symbol:
    in_place = type_.is_subtype_of(T.TensorType.get()) or isinstance(type_, T.ListType)
    ops = AUG_OPERATORS.get(statement.aug_op)
    if ops is None:
        raise CompileError(f"Unknown augmented assignment: {lx.kind_to_string(statement.aug_op)}", statement.range)
    return ops[0] if in_place else ops[1]


def _magic(name: str, symbol: Symbol):
    return MagicMethod(name, BuiltinFunction(symbol))


FunctionEmitter._SIMPLE_EXPRESSIONS = {
    lx.TK_FLOOR_DIV: FunctionEmitter.emit_builtin_operator, "@": FunctionEmitter.emit_builtin_operator,
    "%": FunctionEmitter.emit_modulo,
    **dict.fromkeys((lx.TK_IN, lx.TK_POW, lx.TK_NE, lx.TK_EQ, "<", ">", lx.TK_LE, lx.TK_GE, "*", "/", "+", "-", "&",
                     "|", "^", lx.TK_LSHIFT, lx.TK_RSHIFT), FunctionEmitter.emit_binary_op),
    **dict.fromkeys((lx.TK_IS, lx.TK_ISNOT, lx.TK_AND, lx.TK_OR, lx.TK_NOT), FunctionEmitter.emit_cond_value),
    lx.TK_UNARY_MINUS: FunctionEmitter.emit_unary_op, "~": FunctionEmitter.emit_unary_op,
    lx.TK_STARRED: FunctionEmitter.emit_starred_error, lx.TK_CONST: FunctionEmitter.emit_const,
    lx.TK_TRUE: FunctionEmitter.emit_literal, lx.TK_FALSE: FunctionEmitter.emit_literal,
    lx.TK_NONE: FunctionEmitter.emit_literal, lx.TK_IF_EXPR: FunctionEmitter.emit_ternary_if,
    lx.TK_STRINGLITERAL: FunctionEmitter.emit_string_literal, lx.TK_LIST_LITERAL: FunctionEmitter.emit_list_literal,
    lx.TK_TUPLE_LITERAL: FunctionEmitter.emit_tuple_literal, lx.TK_DICT_LITERAL: FunctionEmitter.emit_dict_literal,
    lx.TK_LIST_COMP: FunctionEmitter.emit_list_comprehension,
    lx.TK_DICT_COMP: FunctionEmitter.emit_dict_comprehension,
}


# ==============================================================================================================
# helpers
# ==============================================================================================================
ALWAYS, MAYBE, NEVER = "always", "maybe", "never"


def _can_be_none(value: Value) -> str:
    if must_be_none(value):
        return ALWAYS
    type_ = value.type
    if isinstance(type_, T.OptionalType) or (isinstance(type_, T.UnionType)
                                             and type_.can_hold_type(T.NoneType.get())):
        return MAYBE
    return NEVER


def _is_none_refinements(lhs: Expr, lhs_value: Value, rhs: Expr, rhs_value: Value, is_: bool) -> RefinementSet:
    """`x is None` refines Optional[T] `x` to T in the false branch (`is not`: the true branch)."""
    if rhs.kind != lx.TK_NONE and lhs.kind == lx.TK_NONE:
        lhs, lhs_value, rhs = rhs, rhs_value, lhs
    if rhs.kind != lx.TK_NONE or not isinstance(lhs, Var):
        return RefinementSet()
    type_ = lhs_value.type
    if isinstance(type_, T.OptionalType):
        present = {lhs.name.name: type_.elem}
    elif isinstance(type_, T.UnionType):
        remaining = [t for t in type_.types if not isinstance(t, T.NoneType)]
        present = {lhs.name.name: T.UnionType.create(remaining)} if remaining else {}
    else:
        return RefinementSet()
    return RefinementSet({}, present) if is_ else RefinementSet(present, {})


def _short_circuit_static(lhs: bool | None, rhs: bool | None, is_or: bool) -> bool | None:
    """The static value of `a or b` / `a and b` from the static values of its sides, if decided."""
    decisive = is_or
    if lhs is decisive or rhs is decisive:
        return decisive
    if lhs is not None and rhs is not None:
        return (lhs or rhs) if is_or else (lhs and rhs)
    return None


def _refine_container_hint(expr: Expr, type_hint: T.Type | None, container: type, name: str
                           ) -> tuple[Any, T.Type | None]:
    """The List/Dict type a literal should take from its hint, and the Union hint to cast back to (if any)."""
    if type_hint is None:
        return None, None
    union_hint = type_hint if isinstance(type_hint, T.UnionType) else None
    refined = type_hint
    if isinstance(type_hint, T.UnionType):
        candidates = [t for t in type_hint.types if isinstance(t, container)]
        if len(candidates) != 1:
            raise CompileError(f"Expected an Union type annotation with an inner {name} type, but got "
                               f"{type_hint.annotation_str()}", expr.range)
        refined = candidates[0]
    elif isinstance(type_hint, T.OptionalType):
        refined = type_hint.elem
    if isinstance(refined, container):
        return refined, union_hint
    if refined == T.AnyType.get():
        return None, union_hint
    raise CompileError(f"Expected an annotation of type {name} but got {type_hint.annotation_str()}", expr.range)


def _is_tensor(value: Value | None) -> bool:
    return value is not None and value.type.is_subtype_of(T.TensorType.get())


def _constant_int(value: Value, loc, message: str = "tuple slice indices must be integer constants") -> int:
    found = constant_of(value)
    if not isinstance(found, int) or isinstance(found, bool):
        raise CompileError(message, loc)
    return found


def _tuple_position(loc, tuple_type: T.TupleType, index: int, allow_out_of_bounds: bool) -> int:
    length = len(tuple_type.elements)
    position = index + length if index < 0 else index
    if not allow_out_of_bounds and not 0 <= position < length:
        raise CompileError(f"Tuple index out of range. Tuple is length {length} and index is {index}", loc)
    return position


def _deferred_error(message: str, loc) -> Callable[[], str]:
    """A message for a later use of a variable: the message and where the if was, ending in ':\\n'."""
    return lambda: f"{message}:\n{loc.highlight()}"

