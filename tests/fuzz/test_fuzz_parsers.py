"""Fuzzing the four text parsers: TorchScript source (frontend/parser.py over lexer.py), IR text (ir/parser.py),
schemas (ir/schema.py) and types in their three dialects (ir/type_parser.py). Each is fed arbitrary text,
token soup and mutations of real inputs; each must give a result or a tsjit error, never another exception or a
hang (fuzzing.py). TSJIT_FUZZ_EXAMPLES sets the examples per test."""

from __future__ import annotations

import glob
import os
import sys

import torch
from fuzzing import FUZZ, mutated_text, result_or_tsjit_error
from hypothesis import given
from hypothesis import strategies as st

from tsjit.frontend.parser import parse_definitions, parse_expression, parse_function
from tsjit.ir.parser import parse_ir
from tsjit.ir.schema import parse_schema, parse_schema_or_name
from tsjit.ir.type_parser import DIALECTS, parse_type

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TESTS, "frontend"))

from script_corpus import PROGRAMS  # noqa: E402

SOURCES = sorted(PROGRAMS.values())
GRAPHS = [open(path).read() for path in sorted(glob.glob(os.path.join(TESTS, "ir", "corpus", "graphs", "*.ir")))]
SCHEMAS = sorted({str(schema) for schema in torch._C._jit_get_all_schemas()})[::40]
TYPES = {
    "schema": ["Tensor(a!)", "int[]?", "(Tensor, int)", "Dict(str, t)(a)", "Union(int, str)", "Future(Tensor)",
               "t[](a -> *)", "Scalar?", "__torch__.torch.classes.ns.Name", "Tensor(a|b!)[]"],
    "ir": ["Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)", "Tensor(*, SS(-3))", "NamedTuple(a : int)",
           "Enum<__torch__.Color>", "Future[int]", "LongTensor", "Tensor[Undefined]", "(int, Dict(str, Tensor))",
           "InterfaceType<I>", "__torch__.M", "Long(requires_grad=0, device=cuda:0)"],
    "annotation": ["List[int]", "Optional[Tensor]", "Tuple[int, str]", "Tuple[()]", "Dict[str, Tensor]",
                   "Union[int, None]", "Final[int]", "torch.device", "typing.List[List[float]]", "number"],
}
FRAGMENTS = ["(", ")", "[", "]", "{", "}", ",", ":", "=", "->", "!", "?", "|", "*", ".", "%", "#", "\n", "\n  ",
             "\\\n", "'", '"', "Tensor", "int", "List", "Dict", "Optional", "Tuple", "Union", "None", "a!",
             "block0():", "-> (", "prim::If", "aten::add", "[value=", "0x1F", "1e999", "9" * 5000, "-", "inf",
             "def ", "if ", "else:", "return ", "class ", "# type: ", "\x00", "é", "\t"]


def _any_text():
    return st.text(max_size=300) | st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join)


@FUZZ
@given(st.one_of(_any_text(), mutated_text(SOURCES, FRAGMENTS)))
def test_source_parser(text):
    for parse in (parse_definitions, parse_expression, parse_function):
        result_or_tsjit_error(parse, text)


@FUZZ
@given(st.one_of(_any_text(), mutated_text(GRAPHS, FRAGMENTS)))
def test_ir_parser(text):
    result_or_tsjit_error(parse_ir, text)


@FUZZ
@given(st.one_of(_any_text(), mutated_text(SCHEMAS, FRAGMENTS)))
def test_schema_parser(text):
    result_or_tsjit_error(parse_schema, text)
    result_or_tsjit_error(parse_schema_or_name, text)


@FUZZ
@given(st.one_of(_any_text(), mutated_text(sum(TYPES.values(), []), FRAGMENTS)))
def test_type_parser(text):
    for dialect in DIALECTS:
        result_or_tsjit_error(parse_type, text, dialect)
