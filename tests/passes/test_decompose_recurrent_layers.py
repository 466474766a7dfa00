"""decompose_recurrent_layers (tsjit/mlir/rnn.py): recurrent layers unrolled over their time steps."""

from __future__ import annotations

from pass_case import check_pass

from tsjit.mlir.rnn import decompose_recurrent_layers

RNN = """
graph(%x : Float(4, 1, 3), %h : Float(1, 1, 5), %w_ih : Float(5, 3), %w_hh : Float(5, 5), %b_ih : Float(5),
      %b_hh : Float(5)):
  %params : Tensor[] = prim::ListConstruct(%w_ih, %w_hh, %b_ih, %b_hh)
  %true : bool = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %p : float = prim::Constant[value=0.]()
  %out : Tensor, %last : Tensor = aten::KIND(%x, %h, %params, %true, %one, %p, %false, %false, %false)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%out, %last)
  return (%r)
"""


def test_an_rnn_layer_becomes_a_step_per_time_step():
    graph = check_pass(decompose_recurrent_layers, RNN.replace("KIND", "rnn_tanh"),
                       present=["aten::linear", "aten::tanh", "aten::stack"], absent=["aten::rnn_tanh"])
    assert str(graph).count("aten::tanh") == 4  # one per time step


def test_a_relu_rnn_too():
    check_pass(decompose_recurrent_layers, RNN.replace("KIND", "rnn_relu"), present=["aten::relu"],
               absent=["aten::rnn_relu"])
