"""The interpreter: Code, a Graph compiled to a linear instruction list, and InterpreterState, one run of it.

Plans normally run as generated Python functions (generated_plan.py); the interpreter runs the plans that fork
or wait (a state can suspend at a wait and resume on another thread), FusionGroup fallbacks, and every plan while
TSJIT_INTERPRETER=1, for debugging and as the reference the generated plans are tested against.

(seed: jit-overview.md "Interpreter", pytorch-ir-2018.md "JIT interpreter bytecode".) Every value has a
register. An instruction reads input registers, runs its operation and writes output registers; an input that
is the last use of its value is *moved*: its register is cleared as soon as the instruction has read it, so
tensors die right after their last use. If and Loop become jumps; a value whose last use sits inside a
branch or loop body is cleared by an explicit DROP after the If or Loop (see last_uses.py). For

    graph(%x : Tensor, %w : Tensor, %flag : bool):
      %y : Tensor = aten::mm(%x, %w)
      %z : Tensor = prim::If(%flag)
        block0():
          %a : Tensor = aten::relu(%y)
          -> (%a)
        block1():
          -> (%y)
      %r : Tensor = aten::mul(%z, %x)
      return (%r)

`Code(graph).dump()` prints (`move` marks a last use; %y dies in the DROP, whatever the branch did):

       0  OP aten::mm          r0, move r1 -> r3
       1  JUMP_IF_FALSE        move r2 -> 5
       2  OP aten::relu        r3 -> r4
       3  MOVE                 move r4 -> r5
       4  JUMP                 -> 6
       5  MOVE                 r3 -> r5
       6  DROP                 move r3
       7  OP aten::mul         move r5, move r0 -> r6
       8  RET                  move r6

Each instruction also has a *step*: a closure `step(registers, pc) -> next pc` built once, which is all the
run loop calls. CALL (prim::CallFunction, prim::CallMethod, subgraph nodes), WAIT on an unfinished future and
RET return `~pc` instead, handing control to InterpreterState: a call pushes a frame, a wait suspends the whole
state (resumed later, possibly on another thread) or blocks, and a return pops a frame.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from tsjit.errors import RuntimeTsjitError
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.objects import Object
from tsjit.ir.symbols import aten, prim
from tsjit.runtime.futures import Future, submit
from tsjit.runtime.last_uses import find_last_uses
from tsjit.runtime.operations import Operation, compile_operation, compiling_for_few_runs
from tsjit.runtime.script_traceback import format_traceback

OP, MOVE, DROP, JUMP, JUMP_IF_FALSE, LOOP_TEST, LOOP_BACK, CALL, WAIT, RET = (
    "OP", "MOVE", "DROP", "JUMP", "JUMP_IF_FALSE", "LOOP_TEST", "LOOP_BACK", "CALL", "WAIT", "RET")

Step = Callable[[list, int], int]
Reads = tuple[tuple[int, ...], tuple[bool, ...]]  # an instruction's input registers, and which reads move them


@dataclass(eq=False, slots=True)
class Instruction:
    """One instruction: the registers it reads (and which of them it moves), what it runs, where results go.

    `outputs` entries are None for results nobody reads. `target` is the jump target of JUMP, JUMP_IF_FALSE,
    LOOP_TEST (the loop exit) and LOOP_BACK (the loop test). `loop` holds a loop's (trip count, counter,
    condition) registers. For CALL, `operation` maps the input values to (callee, arguments).
    """

    opcode: str
    node: Node | None
    inputs: tuple[int, ...] = ()
    moves: tuple[bool, ...] = ()
    outputs: tuple[int | None, ...] = ()
    target: int | None = None
    operation: Operation | None = None
    loop: tuple[int, int, int] | None = None

    def cleared(self) -> tuple[int, ...]:
        """The input registers this instruction clears (the moved ones, each once)."""
        if True not in self.moves:
            return ()
        return tuple(dict.fromkeys(r for r, move in zip(self.inputs, self.moves) if move))

    def __str__(self) -> str:
        name = f"{self.opcode} {self.node.kind}" if self.opcode in (OP, CALL) else self.opcode
        reads = ", ".join(("move " if m else "") + f"r{r}" for r, m in zip(self.inputs, self.moves))
        writes = ", ".join("_" if r is None else f"r{r}" for r in self.outputs)
        result = " -> ".join(part for part in (reads, writes) if part)
        if self.target is not None:
            result = f"{result} -> {self.target}" if result else f"-> {self.target}"
        return f"{name:<20} {result}"


class Code:
    """A Graph compiled for the interpreter; shared by every run of that graph, and by every thread."""

    def __init__(self, graph: Graph):
        emitter = _Emitter(graph)
        self.graph = graph
        self.instructions: list[Instruction] = emitter.instructions
        self.steps: list[Step] = [_STEP_BUILDERS[i.opcode](i) for i in self.instructions]
        self.initial_registers: list[Any] = emitter.initial_registers()
        self.input_registers: tuple[tuple[int, int], ...] = emitter.input_registers
        self.input_count = len(graph.inputs)
        self.fetch_outputs = _fetcher(self.instructions[-1].inputs)  # the graph's outputs, read by its one RET
        # when every input is read, input i has register i (the emitter numbers them first), so a register file
        # is the inputs followed by the rest of the initial registers
        in_order = [r for _, r in self.input_registers] == list(range(self.input_count))
        self._registers_after_inputs = self.initial_registers[self.input_count:] if in_order else None

    def new_registers(self, inputs: Sequence[Any]) -> list[Any]:
        """A register file for one run: the constants, and the graph inputs anybody reads."""
        if len(inputs) != self.input_count:
            raise RuntimeTsjitError(f"the graph takes {self.input_count} inputs, got {len(inputs)}")
        if self._registers_after_inputs is not None:
            return [*inputs, *self._registers_after_inputs]
        registers = self.initial_registers.copy()
        for index, register in self.input_registers:
            registers[register] = inputs[index]
        return registers

    def dump(self) -> str:
        return "".join(f"{pc:>4}  {instruction}\n" for pc, instruction in enumerate(self.instructions))


# ---- compiling a Graph -----------------------------------------------------------------------------------------
_CALL_KINDS = frozenset({prim.CallFunction, prim.CallMethod})
# Nodes that run their `Subgraph` attribute as a call (fusers would compile it; the interpreter runs it as is).
# prim::FusionGroup and prim::DifferentiableGraph are ordinary OPs: their Operations run a compiled kernel
# (tsjit.runtime.fusion) and the forward graph joined to autograd (tsjit.runtime.differentiable_graph_op).
SUBGRAPH_KINDS = frozenset({prim.TensorExprGroup, prim.FallbackGraph, prim.CudaFusionGroup})


class _Emitter:
    """Walks a graph once, appending instructions and assigning registers (jump targets patched when known)."""

    def __init__(self, graph: Graph):
        self.last_uses = find_last_uses(graph)
        self.register_count = 0
        self.registers: dict[Value, int] = {}
        self.constants: dict[int, Any] = {}
        self.instructions: list[Instruction] = []
        self.input_registers = tuple((i, self.register(v)) for i, v in enumerate(graph.inputs) if v.uses)
        self.emit_block(graph.block)
        outputs = graph.block.return_node
        self.emit(RET, outputs, self.read_all(outputs))

    # ---- registers -------------------------------------------------------------------------------------------
    def register(self, value: Value) -> int:
        register = self.registers.get(value)
        if register is None:
            register = self.registers[value] = self.new_register()
        return register

    def new_register(self) -> int:
        self.register_count += 1
        return self.register_count - 1

    def written(self, value: Value) -> int | None:
        """The register a result goes to, or None when nobody reads it."""
        return self.register(value) if value.uses else None

    def read_all(self, node: Node, positions: Sequence[int] | None = None) -> Reads:
        """The registers of the node's inputs (those at `positions`, all by default), and whether each read moves
        its register (a last use; constants are never moved)."""
        inputs, register, moves, constants = node.inputs, self.register, self.last_uses.moves, self.constants
        indices = range(len(inputs)) if positions is None else positions
        registers = tuple([register(inputs[i]) for i in indices])
        return registers, tuple([moves[(node, i)] and r not in constants for i, r in zip(indices, registers)])

    def initial_registers(self) -> list[Any]:
        registers = [None] * self.register_count
        for register, value in self.constants.items():
            registers[register] = value
        return registers

    # ---- instructions ----------------------------------------------------------------------------------------
    def emit(self, opcode: str, node: Node | None, reads: Reads = ((), ()), outputs: tuple[int | None, ...] = (),
             **fields: Any) -> Instruction:
        instruction = Instruction(opcode, node, *reads, outputs, **fields)
        self.instructions.append(instruction)
        return instruction

    def emit_block(self, block: Block) -> None:
        drops = self.last_uses.drops
        for node in block.nodes():
            self.emit_node(node)
            if node in drops:
                dropped = [self.register(v) for v in drops[node]]
                dropped = [r for r in dropped if r not in self.constants]
                if dropped:
                    self.emit(DROP, node, _moved(dropped))

    def emit_node(self, node: Node) -> None:
        if node.kind is prim.Constant:
            self.emit_constant(node)
        elif node.kind is prim.If:
            self.emit_if(node)
        elif node.kind is prim.Loop:
            self.emit_loop(node)
        elif node.kind is aten.wait:
            self.emit(WAIT, node, self.read_all(node), self.outputs_of(node))
        elif node.kind is prim.fork:
            self.emit(OP, node, self.read_all(node), self.outputs_of(node), operation=_subgraph(node).run_async)
        elif node.kind in _CALL_KINDS or node.kind in SUBGRAPH_KINDS:
            self.emit(CALL, node, self.read_all(node), self.outputs_of(node), operation=callee_finder(node))
        else:
            self.emit_operation(node)

    def outputs_of(self, node: Node) -> tuple[int | None, ...]:
        written = self.written
        return tuple([written(v) for v in node.outputs])

    def emit_operation(self, node: Node) -> None:
        operation, positions = compile_operation(node)
        self.emit(OP, node, self.read_all(node, positions), self.outputs_of(node), operation=operation)

    def emit_constant(self, node: Node) -> None:
        """Constants live in the initial register file; one that cannot be built fails only if it runs."""
        if not node.output().uses:
            return
        try:
            value = constant_value(node)  # what prim_ops' prim::Constant operation returns, without loading it
        except Exception as error:
            self.emit(OP, node, outputs=self.outputs_of(node), operation=_raiser(error))
            return
        self.constants[self.register(node.output())] = value

    def emit_if(self, node: Node) -> None:
        branch = self.emit(JUMP_IF_FALSE, node, self.read_all(node))
        then_block, else_block = node.blocks
        self.emit_block_exit(then_block, node)
        skip_else = self.emit(JUMP, node)
        branch.target = len(self.instructions)
        self.emit_block_exit(else_block, node)
        skip_else.target = len(self.instructions)

    def emit_block_exit(self, block: Block, node: Node) -> None:
        """A branch's nodes, then the move of its results into the If's outputs."""
        self.emit_block(block)
        if node.outputs:
            self.emit(MOVE, node, self.read_all(block.return_node), self.outputs_of(node))

    def emit_loop(self, node: Node) -> None:
        """Loop state lives in fresh registers: trip count, counter, condition and the carried values.

            LOOP_ENTER (a MOVE)   trip, condition, carried <- the Loop's inputs; counter <- 0
            test: LOOP_TEST       unless condition and counter < trip: jump to exit
                                  iteration variable <- counter; body inputs <- carried (moved)
            body nodes...
            LOOP_BACK             condition, carried <- body outputs; counter += 1; jump to test
            exit: MOVE            the Loop's outputs <- carried (moved); DROP trip, counter, condition
        """
        body = node.blocks[0]
        trip, counter, condition = self.new_register(), self.new_register(), self.new_register()
        carried = tuple(self.new_register() for _ in node.outputs)
        zero = self.new_register()
        self.constants[zero] = 0
        registers, moves = self.read_all(node)
        self.emit(MOVE, node, ((*registers, zero), (*moves, False)), (trip, condition, *carried, counter))
        test_pc = len(self.instructions)
        test = self.emit(LOOP_TEST, node, _moved(carried),
                         tuple(self.written(v) for v in body.inputs), loop=(trip, counter, condition))
        self.emit_block(body)
        self.emit(LOOP_BACK, node, self.read_all(body.return_node), (condition, *carried), target=test_pc,
                  loop=(trip, counter, condition))
        test.target = len(self.instructions)
        self.emit(MOVE, node, _moved(carried), self.outputs_of(node))
        self.emit(DROP, node, _moved((trip, counter, condition)))


def _moved(registers: Sequence[int]) -> Reads:
    """Reads of `registers` that move each of them."""
    return tuple(registers), (True,) * len(registers)


def _subgraph(node: Node):
    """A Function running a node's `Subgraph` attribute (prim::fork, prim::TensorExprGroup, ...); a
    prim::FallbackGraph's with the specializations it has left (passes/insert_type_guards.py)."""
    from tsjit.runtime.function import Function  # breaks a real cycle: function -> graph_executor -> interpreter

    depth = node.i("remaining_depth") if node.has_attribute("remaining_depth") else None
    return Function(f"{node.kind.name}_subgraph", node.g("Subgraph"), remaining_depth=depth)


def callee_finder(node: Node) -> Callable[[list], tuple[Any, list]]:
    """For a CALL: which function runs, and with which arguments, given the node's input values."""
    if node.kind is prim.CallFunction:
        return lambda values: (values[0], values[1:])
    if node.kind is prim.CallMethod:
        return _method_finder(node.s("name"))
    function = _subgraph(node)
    return lambda values: (function, values)


def _method_finder(name: str) -> Callable[[list], tuple[Any, list]]:
    """A tsjit Object's method runs its Function in a new frame; a Python object's method is just called.

    The method comes from the object's class type, not `getattr`: `__init__` must find the TorchScript
    method, not Python's.
    """
    def find(values: list) -> tuple[Any, list]:
        owner = values[0]
        if isinstance(owner, Object):
            return owner.type.methods[name], values
        return getattr(owner, name), values[1:]

    return find


def _raiser(error: Exception) -> Operation:
    def operation(*_):
        raise error

    return operation


# ---- steps: the closures the run loop calls ----------------------------------------------------------------------
def _fetcher(registers: tuple[int, ...]) -> Callable[[list], tuple]:
    """registers -> the tuple of values in `registers` (itemgetter returns a bare value for one register)."""
    if len(registers) >= 2:
        return itemgetter(*registers)
    if registers:
        (register,) = registers
        return lambda values: (values[register],)
    return lambda values: ()


def _op_step(instruction: Instruction) -> Step:
    operation, inputs, cleared = instruction.operation, instruction.inputs, instruction.cleared()
    outputs = instruction.outputs
    if len(outputs) == 1 and outputs[0] is not None:
        if len(inputs) <= _MAX_UNROLLED_INPUTS and not compiling_for_few_runs():
            positions = tuple(inputs.index(register) for register in cleared)
            return _unrolled_step_factory(len(inputs), positions)(operation, outputs[0], *inputs)
        if len(inputs) == 1:  # a profiling plan's prim::profile nodes, most of its instructions
            return _unary_step(operation, inputs[0], outputs[0], bool(cleared))
        return _single_output_step(operation, _fetcher(inputs), outputs[0], cleared)
    return _general_step(operation, _fetcher(inputs), outputs, cleared)


_MAX_UNROLLED_INPUTS = 8


# The unrolled steps are generated source, compiled once per (arity, cleared) in a process (~0.2 ms each): a plan
# that runs once or twice (a profiling plan) gets the plain steps instead, which cost nothing to build.
@functools.cache
def _unrolled_step_factory(arity: int, cleared: tuple[int, ...]) -> Callable[..., Step]:
    """A factory of steps for single-output operations of `arity` inputs, clearing the inputs at positions
    `cleared` afterwards. The step reads and clears each register by name instead of fetching a tuple and
    looping (about half the overhead of _single_output_step); for arity 2, cleared (0, 1), it makes

        def step(registers, pc):
            registers[target] = operation(registers[r0], registers[r1])
            registers[r0] = None
            registers[r1] = None
            return pc + 1
    """
    names = [f"r{k}" for k in range(arity)]
    lines = [f"def factory(operation, target{''.join(', ' + n for n in names)}):",
             "    def step(registers, pc):",
             f"        registers[target] = operation({', '.join(f'registers[{n}]' for n in names)})",
             *(f"        registers[{names[k]}] = None" for k in cleared),
             "        return pc + 1",
             "    return step"]
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(lines), f"<tsjit step: {arity} inputs, clears {cleared}>", "exec"), namespace)
    return namespace["factory"]


def _unary_step(operation: Operation, source: int, target: int, move: bool) -> Step:
    """A single-output operation of one input, built without generating code (for plans that run once or
    twice; the others get the unrolled step)."""
    if move:
        def step(registers, pc):
            registers[target] = operation(registers[source])
            registers[source] = None
            return pc + 1
    else:
        def step(registers, pc):
            registers[target] = operation(registers[source])
            return pc + 1
    return step


def _single_output_step(operation: Operation, fetch, target: int, cleared: tuple[int, ...]) -> Step:
    def step(registers, pc):
        registers[target] = operation(*fetch(registers))
        for register in cleared:
            registers[register] = None
        return pc + 1

    return step


def _general_step(operation: Operation, fetch, outputs: tuple[int | None, ...], cleared: tuple[int, ...]) -> Step:
    """No output, an unread single output, or several outputs (the operation returns a sequence)."""
    stores = tuple((k, r) for k, r in enumerate(outputs) if r is not None) if len(outputs) > 1 else ()

    def step(registers, pc):
        result = operation(*fetch(registers))
        for register in cleared:
            registers[register] = None
        for k, register in stores:
            registers[register] = result[k]
        return pc + 1

    return step


def _move_step(instruction: Instruction) -> Step:
    """A parallel move: read every source, clear the moved ones, then write the destinations."""
    fetch, cleared = _fetcher(instruction.inputs), instruction.cleared()
    stores = tuple((k, r) for k, r in enumerate(instruction.outputs) if r is not None)
    if len(instruction.inputs) == 1 and len(stores) == 1 and len(instruction.outputs) == 1:
        return _single_move_step(instruction.inputs[0], instruction.outputs[0], bool(cleared))

    def step(registers, pc):
        values = fetch(registers)
        for register in cleared:
            registers[register] = None
        for k, register in stores:
            registers[register] = values[k]
        return pc + 1

    return step


def _single_move_step(source: int, target: int, move: bool) -> Step:
    """The common move of one value (a branch's result into its If's output)."""
    if move:
        def step(registers, pc):
            value = registers[source]
            registers[source] = None
            registers[target] = value
            return pc + 1
    else:
        def step(registers, pc):
            registers[target] = registers[source]
            return pc + 1
    return step


def _drop_step(instruction: Instruction) -> Step:
    cleared = instruction.inputs
    if len(cleared) == 1:
        (register,) = cleared

        def drop(registers, pc):
            registers[register] = None
            return pc + 1

        return drop

    def step(registers, pc):
        for register in cleared:
            registers[register] = None
        return pc + 1

    return step


def _jump_step(instruction: Instruction) -> Step:
    target = instruction.target
    return lambda registers, pc: target


def _branch_step(instruction: Instruction) -> Step:
    (condition,), (move,), target = instruction.inputs, instruction.moves, instruction.target
    if move:
        def step(registers, pc):
            value = registers[condition]
            registers[condition] = None
            return pc + 1 if value else target
    else:
        def step(registers, pc):
            return pc + 1 if registers[condition] else target
    return step


def _loop_test_step(instruction: Instruction) -> Step:
    """Enter the body (iteration variable and carried values into its inputs) or jump to the exit."""
    trip, counter, condition = instruction.loop
    iteration, *parameters = instruction.outputs
    moves = tuple(zip(instruction.inputs, parameters))
    exit_pc = instruction.target

    def step(registers, pc):
        count = registers[counter]
        if not (registers[condition] and count < registers[trip]):
            return exit_pc
        if iteration is not None:
            registers[iteration] = count
        for source, target in moves:
            if target is not None:
                registers[target] = registers[source]
            registers[source] = None
        return pc + 1

    return step


def _loop_back_step(instruction: Instruction) -> Step:
    move = _move_step(instruction)
    counter, test_pc = instruction.loop[1], instruction.target

    def step(registers, pc):
        move(registers, pc)
        registers[counter] += 1
        return test_pc

    return step


def _wait_step(instruction: Instruction) -> Step:
    """The value of a completed future; an unfinished one hands control to the InterpreterState."""
    (source,), (move,), (target,) = instruction.inputs, instruction.moves, instruction.outputs

    def step(registers, pc):
        future = registers[source]
        if not future.done():
            return ~pc
        if move:
            registers[source] = None
        value = future.value()
        if target is not None:
            registers[target] = value
        return pc + 1

    return step


def _interrupt_step(instruction: Instruction) -> Step:
    return lambda registers, pc: ~pc


_STEP_BUILDERS: dict[str, Callable[[Instruction], Step]] = {
    OP: _op_step, MOVE: _move_step, DROP: _drop_step, JUMP: _jump_step, JUMP_IF_FALSE: _branch_step,
    LOOP_TEST: _loop_test_step, LOOP_BACK: _loop_back_step, WAIT: _wait_step, CALL: _interrupt_step,
    RET: _interrupt_step,
}


# ---- running Code ------------------------------------------------------------------------------------------------
class Frame:
    """One activation of a Code: its registers, its program counter, and the CALL that created it."""

    __slots__ = ("code", "registers", "pc", "call")

    def __init__(self, code: Code, inputs: Sequence[Any], call: Instruction | None):
        self.code = code
        self.registers = code.new_registers(inputs)
        self.pc = 0
        self.call = call


_SUSPENDED = object()


class InterpreterState:
    """One execution of a Code: a stack of frames; the whole state can suspend at a wait and resume later.

    `run()` runs to completion on the calling thread, blocking at waits. `run_async(future)` runs until the
    first wait on an unfinished future and returns; the state resumes on a pool thread when that future
    completes, and `future` completes with the result.
    """

    def __init__(self, code: Code, inputs: Sequence[Any], max_steps: int | None = None):
        self.frames = [Frame(code, inputs, None)]
        self.future: Future | None = None
        self.budget = None if max_steps is None else StepBudget(max_steps)

    def run(self) -> Any:
        """The graph's result: its one output, a tuple of several, or None for none."""
        return graph_result(self._run(suspend=False))

    def run_async(self, future: Future) -> None:
        self.future = future
        self._continue()

    def _continue(self) -> None:
        try:
            outputs = self._run(suspend=True)
        except Exception as error:
            self.future.set_exception(error)
            return
        if outputs is not _SUSPENDED:
            self.future.set_result(graph_result(outputs))

    def _run(self, suspend: bool) -> Any:
        try:
            return self._run_frames(suspend)
        except InterpreterError:  # from a callee's own state, or through a wait: it already names its node
            raise
        except Exception as error:
            raise self._error(error) from error

    def _run_frames(self, suspend: bool) -> Any:
        while True:
            frame = self.frames[-1]
            instruction = _execute(frame) if self.budget is None else self.budget.execute(frame)
            if instruction.opcode is CALL:
                self._call(frame, instruction)
            elif instruction.opcode is RET:
                outputs = frame.code.fetch_outputs(frame.registers)
                self.frames.pop()
                if not self.frames:
                    return outputs
                self._return_to_caller(frame.call, outputs)
            elif suspend:  # WAIT on an unfinished future
                frame.registers[instruction.inputs[0]].add_done_callback(lambda _: submit(self._continue))
                return _SUSPENDED
            else:
                frame.registers[instruction.inputs[0]].block_until_done()

    def _call(self, frame: Frame, instruction: Instruction) -> None:
        values = [frame.registers[r] for r in instruction.inputs]
        for register in instruction.cleared():
            frame.registers[register] = None
        callee, arguments = instruction.operation(values)
        executor = getattr(callee, "executor", None)
        if executor is not None:
            self.frames.append(Frame(executor.get_plan(arguments).code, arguments, instruction))
            return
        result = callee(*arguments)
        count = len(instruction.outputs)
        self._return_to_caller(instruction, (result,) if count == 1 else () if count == 0 else result)

    def _return_to_caller(self, call: Instruction, outputs: Sequence[Any]) -> None:
        """Store a callee's outputs in the caller's registers (a subgraph may return extra, unused values)."""
        caller = self.frames[-1]
        for register, value in zip(call.outputs, outputs):
            if register is not None:
                caller.registers[register] = value
        caller.pc += 1

    def _error(self, error: Exception) -> InterpreterError:
        """An InterpreterError naming the failing node and the calls leading to it."""
        return node_error(error, [frame.code.instructions[frame.pc].node for frame in reversed(self.frames)])


def graph_result(outputs: tuple) -> Any:
    """What running a graph returns: its one output, a tuple of several, or None for none."""
    if len(outputs) == 1:
        return outputs[0]
    return outputs or None


def _execute(frame: Frame) -> Instruction:
    """Run a frame's steps until one hands control back; on return (or error) `frame.pc` is that step's pc."""
    steps, registers, pc = frame.code.steps, frame.registers, frame.pc
    try:
        while pc >= 0:
            pc = steps[pc](registers, pc)
    finally:
        frame.pc = pc if pc >= 0 else ~pc
    return frame.code.instructions[frame.pc]


class StepBudgetExceeded(RuntimeTsjitError):
    """A run executed more instructions than its StepBudget allows."""


class StepBudget:
    """How many instructions a run may still execute: code from an untrusted archive (`__setstate__` run while
    loading) must finish, and a TorchScript program loops only through instructions."""

    def __init__(self, steps: int):
        self.limit = self.remaining = steps

    def execute(self, frame: Frame) -> Instruction:
        """`_execute` counting steps (a separate loop, so that unbudgeted runs pay nothing)."""
        steps, registers, pc = frame.code.steps, frame.registers, frame.pc
        try:
            while pc >= 0:
                self.remaining -= 1
                if self.remaining < 0:
                    raise StepBudgetExceeded(f"the step budget of {self.limit} instructions is spent")
                pc = steps[pc](registers, pc)
        finally:
            frame.pc = pc if pc >= 0 else ~pc
        return frame.code.instructions[frame.pc]


def node_error(error: Exception, nodes: Sequence[Node]) -> InterpreterError:
    """An InterpreterError for `error` raised by `nodes[0]`, called from `nodes[1]`, ...: TorchScript's traceback
    (script_traceback.py) ending with the original error, which is also its `__cause__` (the generated plans of
    generated_plan.py raise the same)."""
    interpreter_error = error_class(type(error))(format_traceback(error, nodes))
    interpreter_error.node = nodes[0]
    interpreter_error.nodes = tuple(nodes)
    interpreter_error.__cause__ = error
    return interpreter_error


class InterpreterError(RuntimeTsjitError):
    """An exception raised by a node while a graph ran; `node` is that node, `__cause__` the original error.

    The message is TorchScript's traceback: the calls that led to the node, outermost first, each with its source
    line, then the original error (script_traceback.py). Errors are
    also instances of the builtin exception class they replace (see `error_class`), so `except ValueError`
    still catches a `raise ValueError(...)` in a scripted program, and `except RuntimeError` an ATen error.
    """

    node: Node | None = None
    nodes: tuple[Node, ...] = ()  # the failing node, then the call nodes that led to it


@functools.cache
def error_class(python_type: type) -> type[InterpreterError]:
    """InterpreterError, combined with the nearest builtin exception class of `python_type` that allows it."""
    for base in python_type.__mro__:
        if base.__module__ != "builtins" or base in (Exception, BaseException, object):
            continue
        try:
            combined = type(base.__name__, (InterpreterError, base), {"__str__": Exception.__str__})
            combined("probe")
        except TypeError:  # an incompatible layout or constructor (UnicodeDecodeError takes 5 arguments)
            continue
        return combined
    return InterpreterError
