"""remove_mutation: in-place ops on tensors nothing else observes become out-of-place."""

from __future__ import annotations

import pytest
import torch
from pass_case import check_pass

from tsjit.passes.remove_mutation import remove_mutation

FRESH = """
graph(%x : Tensor, %w : Tensor):
  %y : Tensor = aten::matmul(%x, %w)
  %z : Tensor = aten::relu_(%y)
  %one : int = prim::Constant[value=1]()
  %r : Tensor = aten::add(%y, %z, %one)
  return (%r)"""
LOOP_CARRIED = """
graph(%x : Tensor, %w : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %true : bool = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %acc.1 : Tensor = aten::zeros_like(%x, %none, %none, %none, %none, %none)
  %acc : Tensor = prim::Loop(%three, %true, %acc.1)
    block0(%i : int, %acc.2 : Tensor):
      %acc.3 : Tensor = aten::sub_(%acc.2, %i, %one)
      %acc.4 : Tensor = aten::mul_(%acc.3, %w)
      -> (%true, %acc.4)
  return (%acc)"""


def test_a_write_to_a_fresh_tensor_becomes_out_of_place_as_in_torch_jit():
    check_pass(remove_mutation, FRESH, inputs=[(torch.randn(2, 2), torch.randn(2, 2))],
               present=["aten::matmul", "aten::relu(%y)", "aten::add(%"], absent=["aten::relu_"],
               oracle="_jit_pass_remove_mutation")


def test_writes_to_a_loop_carried_fresh_tensor_become_out_of_place():
    check_pass(remove_mutation, LOOP_CARRIED, inputs=[(torch.randn(2, 2), torch.randn(2, 2))],
               present=["aten::zeros_like", "prim::Loop", "aten::sub(", "aten::mul("],
               absent=["aten::sub_", "aten::mul_"])


@pytest.mark.parametrize("text", [
    """
graph(%x : Tensor):
  %y : Tensor = aten::relu_(%x)
  return (%y)""",
    """
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %y : Tensor = aten::clone(%x, %none)
  %row : Tensor = aten::select(%y, %zero, %zero)
  %r : Tensor = aten::relu_(%y)
  return (%row)""",
    """
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %true : bool = prim::Constant[value=1]()
  %y : Tensor = aten::clone(%x, %none)
  %acc : Tensor = prim::Loop(%one, %true, %y)
    block0(%i : int, %acc.2 : Tensor):
      %acc.3 : Tensor = aten::neg_(%acc.2)
      -> (%true, %acc.3)
  %r : Tensor = aten::add(%acc, %y, %one)
  return (%r)"""], ids=["graph input", "viewed before the write", "loop input read after the loop"])
def test_writes_others_can_see_stay(text):
    check_pass(remove_mutation, text, changed=False)


def test_writes_through_a_view_of_a_fresh_tensor_become_scatters():
    check_pass(remove_mutation, """
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %y : Tensor = aten::clone(%x, %none)
  %row : Tensor = aten::select(%y, %zero, %zero)
  %three : Tensor = aten::tensor(%one, %none, %none, %false)
  %w : Tensor = aten::copy_(%row, %three, %false)
  %tail : Tensor = aten::slice(%y, %zero, %one, %none, %one)
  %t : Tensor = aten::add_(%tail, %one, %one)
  %r : Tensor = aten::relu_(%y)
  return (%y)""", inputs=[(torch.randn(3, 2),)], present=["aten::select_scatter", "aten::slice_scatter"],
               absent=["aten::copy_", "aten::add_", "aten::relu_"])


def test_a_view_read_before_the_write_and_a_view_of_a_view_are_written_through():
    check_pass(remove_mutation, """
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %false : bool = prim::Constant[value=0]()
  %y : Tensor = aten::clone(%x, %none)
  %source : Tensor = aten::slice(%y, %zero, %zero, %one, %one)
  %target : Tensor = aten::slice(%y, %zero, %one, %two, %one)
  %w : Tensor = aten::copy_(%target, %source, %false)
  %column : Tensor = aten::slice(%y, %zero, %none, %none, %one)
  %cell : Tensor = aten::select(%column, %one, %two)
  %c : Tensor = aten::add_(%cell, %one, %one)
  return (%y)""", inputs=[(torch.randn(3, 4),)], present=["aten::slice_scatter", "aten::select_scatter"],
               absent=["aten::copy_", "aten::add_"])


def test_a_view_read_after_the_write_keeps_it():
    check_pass(remove_mutation, """
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::clone(%x, %none)
  %first : Tensor = aten::select(%y, %zero, %zero)
  %row : Tensor = aten::select(%y, %zero, %one)
  %w : Tensor = aten::mul_(%row, %one)
  %r : Tensor = aten::add(%first, %w, %one)
  return (%r)""", changed=False)



def test_a_second_write_through_a_view_writes_the_whole_tensor_again():
    check_pass(remove_mutation, """
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %y : Tensor = aten::clone(%x, %none)
  %row : Tensor = aten::select(%y, %zero, %zero)
  %a : Tensor = aten::add_(%row, %one, %one)
  %b : Tensor = aten::mul_(%row, %two)
  return (%y)""", inputs=[(torch.randn(3, 2),)], present=["aten::select_scatter", "aten::select_scatter"],
               absent=["aten::add_", "aten::mul_"])
