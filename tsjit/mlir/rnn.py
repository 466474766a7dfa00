"""Recurrent layers unrolled into the aten ops they compute: `aten::lstm`, `aten::gru`, `aten::rnn_tanh`,
`aten::rnn_relu` (the `.input` overloads nn.LSTM / nn.GRU / nn.RNN call).

torch-mlir has no op for these: they are imported as `torch.operator`, which no backend pipeline legalizes. What
they compute is a few matrix products and pointwise ops per time step, all of which lower on every backend, so
before import each layer becomes those ops, unrolled over the time steps. That needs the sequence length, which
the input's refined type gives (tsjit.mlir.shapes; a program whose sequence length is not static is refused
with an MLIRError), and the flags (layers, directions, batch_first, dropout), which are constants once the
module's attributes are specialized. Per layer and direction, with the weights `params` lists in PyTorch's order
(w_ih, w_hh, then b_ih, b_hh with biases, then w_hr with a projection):

    %xw = aten::linear(%x, %w_ih, %b_ih)                     the input's share of the gates, every step at once
    for t in 0..T-1 (T-1..0 for the reverse direction):
        %g = aten::add(aten::select(%xw, 0, t), aten::linear(%h, %w_hh, %b_hh))
        LSTM: i, f, c~, o = sigmoid/sigmoid/tanh/sigmoid of the four slices of %g (dim -1);
              %c = f * %c + i * c~; %h = o * tanh(%c) (then aten::linear(%h, %w_hr) with a projection)
        GRU:  r, z = sigmoid of the input and hidden slices added; n = tanh(xw_n + r * hw_n); %h = n + z * (%h - n)
        RNN:  %h = tanh(%g) or relu(%g)
    output = aten::stack(h of every step, 0)                 both directions: aten::cat(..., 2)

Between layers, training-mode dropout is `aten::dropout` of the layer's output; batch_first transposes the input
and the output; the final states are the last step's states stacked over layers and directions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tsjit import log
from tsjit.errors import MLIRError
from tsjit.ir import types as ts
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.symbols import Symbol, aten, prim

_GATES = {aten.lstm: 4, aten.gru: 3, aten.rnn_tanh: 1, aten.rnn_relu: 1}
_FLAGS = ("has_biases", "num_layers", "dropout", "train", "bidirectional", "batch_first")


def decompose_recurrent_layers(graph: Graph) -> bool:
    """Replace every recurrent layer (`.input` overload) by its unrolled computation."""
    nodes = [n for n in graph.all_nodes() if n.kind in _GATES and _overload(n) == "input" and log.opt_allowed()]
    for node in nodes:
        _decompose(graph, node)
    return bool(nodes)


def _overload(node: Node) -> str | None:
    schema = node.maybe_schema()
    return schema.overload_name if schema is not None else None


@dataclass(frozen=True)
class _Weights:
    """One layer and direction's parameters; biases and the projection may be absent."""

    ih: Value
    hh: Value
    b_ih: Value | None
    b_hh: Value | None
    hr: Value | None

    @staticmethod
    def of(params: Sequence[Value], has_biases: bool) -> _Weights:
        ih, hh, *rest = params
        biases, projection = (rest[:2], rest[2:]) if has_biases else ([None, None], rest)
        return _Weights(ih, hh, *biases, projection[0] if projection else None)


def _decompose(graph: Graph, node: Node) -> None:
    input_, hx, params = node.inputs[:3]
    flags = dict(zip(_FLAGS, (_constant(node, name, v) for name, v in zip(_FLAGS, node.inputs[3:]))))
    states = _list_elements(node, "hx", hx) if node.kind is aten.lstm else [hx]
    params = _list_elements(node, "params", params)
    steps = _sequence_length(node, input_, flags["batch_first"])
    directions = 2 if flags["bidirectional"] else 1
    per_cell = len(params) // (flags["num_layers"] * directions)
    cells = [_Weights.of(params[i:i + per_cell], flags["has_biases"]) for i in range(0, len(params), per_cell)]
    hidden = [_hidden_size(node, weights) for weights in cells]
    step = _STEPS[node.kind]
    with graph.insert_point_guard(node):
        x = graph.insert(aten.transpose, [input_, 0, 1]) if flags["batch_first"] else input_
        finals: list[list[Value]] = [[] for _ in states]
        for layer in range(flags["num_layers"]):
            if layer and flags["train"] and flags["dropout"] > 0:
                x = graph.insert(aten.dropout, [x, flags["dropout"], True])
            outputs = []
            for direction in range(directions):
                cell = layer * directions + direction
                initial = [graph.insert(aten.select, [s, 0, cell]) for s in states]
                output, last = _run_direction(graph, step, x, cells[cell], hidden[cell], initial, steps,
                                              reverse=direction == 1)
                outputs.append(output)
                for final, state in zip(finals, last):
                    final.append(state)
            x = outputs[0] if directions == 1 else graph.insert(aten.cat, [outputs, 2])
        output = graph.insert(aten.transpose, [x, 0, 1]) if flags["batch_first"] else x
        results = [output, *(graph.insert(aten.stack, [final, 0]) for final in finals)]
    for old, new in zip(node.outputs, results):
        old.replace_all_uses_with(new)
    node.destroy()


def _constant(node: Node, name: str, value: Value):
    if value.node.kind is not prim.Constant:
        raise MLIRError(f"{node.kind} is unrolled at compile time, which needs a constant {name}:\n{node}")
    return constant_value(value.node)


def _list_elements(node: Node, name: str, value: Value) -> list[Value]:
    """The elements of a list literal nothing writes to."""
    schemas = [use.user.maybe_schema() for use in value.uses]
    if value.node.kind is not prim.ListConstruct or any(s is None or s.is_mutable for s in schemas):
        raise MLIRError(f"{node.kind} is unrolled at compile time, which needs {name} as a list literal "
                        f"(prim::ListConstruct) nothing writes to:\n{node}")
    return list(value.node.inputs)


def _sequence_length(node: Node, input_: Value, batch_first: bool) -> int:
    type_ = input_.type
    sizes = type_.sizes if isinstance(type_, ts.TensorType) else None
    if sizes is None or len(sizes) != 3 or sizes[1 if batch_first else 0] is None:
        raise MLIRError(f"{node.kind} is unrolled over the time steps, which needs a static sequence length; "
                        f"the input %{input_.debug_name} has type {type_}:\n{node}")
    return sizes[1 if batch_first else 0]


def _hidden_size(node: Node, weights: _Weights) -> int:
    sizes = weights.hh.type.sizes if isinstance(weights.hh.type, ts.TensorType) else None
    if sizes is None or sizes[0] is None:
        raise MLIRError(f"{node.kind}: the size of the recurrent weight %{weights.hh.debug_name} is not known "
                        f"({weights.hh.type}):\n{node}")
    return sizes[0] // _GATES[node.kind]


_Step = Callable[[Graph, Value, list[Value], _Weights, int], list[Value]]


def _run_direction(graph: Graph, step: _Step, x: Value, weights: _Weights, hidden: int, initial: list[Value],
                   steps: int, reverse: bool) -> tuple[Value, list[Value]]:
    """The outputs of every time step stacked in time order, and the states after the last step."""
    projected = graph.insert(aten.linear, [x, weights.ih, weights.b_ih])
    states, outputs = initial, [None] * steps
    for t in reversed(range(steps)) if reverse else range(steps):
        states = step(graph, graph.insert(aten.select, [projected, 0, t]), states, weights, hidden)
        outputs[t] = states[0]
    return graph.insert(aten.stack, [outputs, 0]), states


def _gate(graph: Graph, gates: Value, index: int, hidden: int) -> Value:
    return graph.insert(aten.slice, [gates, -1, index * hidden, (index + 1) * hidden, 1])


def _lstm_step(graph: Graph, xw: Value, states: list[Value], weights: _Weights, hidden: int) -> list[Value]:
    h, c = states
    gates = graph.insert(aten.add, [xw, graph.insert(aten.linear, [h, weights.hh, weights.b_hh])])
    i, f, g, o = (graph.insert(op, [_gate(graph, gates, k, hidden)])
                  for k, op in enumerate((aten.sigmoid, aten.sigmoid, aten.tanh, aten.sigmoid)))
    c = graph.insert(aten.add, [graph.insert(aten.mul, [f, c]), graph.insert(aten.mul, [i, g])])
    h = graph.insert(aten.mul, [o, graph.insert(aten.tanh, [c])])
    if weights.hr is not None:
        h = graph.insert(aten.linear, [h, weights.hr, None])
    return [h, c]


def _gru_step(graph: Graph, xw: Value, states: list[Value], weights: _Weights, hidden: int) -> list[Value]:
    (h,) = states
    hw = graph.insert(aten.linear, [h, weights.hh, weights.b_hh])
    r, z = (graph.insert(aten.sigmoid, [graph.insert(aten.add, [_gate(graph, xw, k, hidden),
                                                                _gate(graph, hw, k, hidden)])]) for k in (0, 1))
    recurrent = graph.insert(aten.mul, [r, _gate(graph, hw, 2, hidden)])
    n = graph.insert(aten.tanh, [graph.insert(aten.add, [_gate(graph, xw, 2, hidden), recurrent])])
    return [graph.insert(aten.add, [n, graph.insert(aten.mul, [z, graph.insert(aten.sub, [h, n])])])]


def _simple_step(activation) -> _Step:
    def step(graph: Graph, xw: Value, states: list[Value], weights: _Weights, hidden: int) -> list[Value]:
        recurrent = graph.insert(aten.linear, [states[0], weights.hh, weights.b_hh])
        return [graph.insert(activation, [graph.insert(aten.add, [xw, recurrent])])]
    return step


_STEPS: dict[Symbol, _Step] = {aten.lstm: _lstm_step, aten.gru: _gru_step, aten.rnn_tanh: _simple_step(aten.tanh),
                aten.rnn_relu: _simple_step(aten.relu)}
