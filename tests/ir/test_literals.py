"""Doubles and strings printed as PyTorch prints them: graph constants (IValue::repr) and schema defaults."""

from __future__ import annotations

import struct

import torch

from tsjit.ir.literals import format_complex, format_default_double, format_double, quote_string
from tsjit.ir.parser import parse_ir

NEGATIVE_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]


def test_format_double_is_ivalue_repr():
    values = (1.0, -0.0, 0.1, 1e20, 12345678901.0, float("inf"), -float("inf"), float("nan"), NEGATIVE_NAN)
    assert [format_double(v) for v in values] == [
        "1.", "-0.", "0.10000000000000001", "1e+20", "12345678901", "inf", "-inf", "nan", "-nan"]


def test_schema_defaults_print_as_torch_prints_them():
    for text in ("1e15", "-0.0", "12345678901.0", "1e19", "0.1"):
        schema = f"a::b(float x={text}) -> ()"
        expected = str(torch._C.parse_schema(schema)).split("x=")[1].split(")")[0]
        assert format_default_double(float(text)) == expected


def test_negative_nan_keeps_its_sign_in_graph_text():
    graph = parse_ir("graph():\n  %a : float = prim::Constant[value=-nan]()\n  return (%a)\n")
    assert "value=-nan" in str(graph) and format_default_double(NEGATIVE_NAN) == "-nan"


def test_complex_and_strings():
    assert format_complex(complex(2, -1)) == "2.-1.j"
    assert format_complex(complex(1e15, 0), format_default_double) == "1000000000000000.+0.j"
    assert quote_string("a'b\x7f") == '"a\\\'b\\177"'
