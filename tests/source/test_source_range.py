"""Source and SourceRange: positions, and highlight() rendering byte for byte like TorchScript's errors."""

from __future__ import annotations

import importlib.util
import inspect
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tsjit.source.source_range import Source, SourceRange

tree_views = pytest.importorskip("torch._C._jit_tree_views")


def torch_highlight(text: str, filename: str | None, starting_line: int, start: int, end: int) -> str:
    factory = tree_views.SourceRangeFactory(text, filename, starting_line, 0)
    return factory.make_raw_range(start, end).highlight()


def test_text_and_line_col():
    source = Source("def f(x):\n    return x + 1\n", "m.py", starting_line=10)
    plus = source.text.index("+")
    span = SourceRange(source, plus - 2, plus + 3)
    assert span.text() == "x + 1"
    assert span.start_line_col() == (11, 11)
    assert span.line_col() == (11, 11)
    assert span.filename == "m.py"
    assert SourceRange(source, 0, 3).start_line_col() == (10, 0)


def test_line_col_defaults_to_first_line_one():
    source = Source("a\nbb\nccc")
    assert SourceRange(source, source.text.index("ccc"), len(source.text)).start_line_col() == (3, 0)


def test_highlight_single_line():
    source = Source("def f(x):\n    y = x + 1\n    return y + undefined_name\n")
    start = source.text.index("undefined_name")
    expected = ("def f(x):\n    y = x + 1\n    return y + undefined_name\n"
                "               ~~~~~~~~~~~~~~ <--- HERE\n")
    assert SourceRange(source, start, start + len("undefined_name")).highlight() == expected


def test_highlight_multi_line_span_marks_every_line():
    source = Source("a = f(x,\n      y)\nb = 2\n", "file.py", starting_line=3)
    start = source.text.index("f(")
    end = source.text.index(")") + 1
    expected = '  File "file.py", line 3\na = f(x,\n    ~~~~\n      y)\n      ~~ <--- HERE\nb = 2\n'
    assert SourceRange(source, start, end).highlight() == expected


def test_highlight_shows_two_lines_of_context_each_side():
    # TorchScript's CONTEXT is 3, but it counts the highlighted line itself
    lines = [f"line{i}" for i in range(10)]
    source = Source("\n".join(lines))
    start = source.text.index("line5")
    highlighted = SourceRange(source, start, start + 5).highlight()
    assert highlighted == "line3\nline4\nline5\n~~~~~ <--- HERE\nline6\nline7\n"


def test_str_repr_eq_hash():
    source = Source("x + y", "f.py")
    span = SourceRange(source, 4, 5)
    assert str(span) == "SourceRange at:\n" + span.highlight()
    assert repr(span) == "SourceRange(f.py:1:4, 'y')"
    assert span == SourceRange(source, 4, 5)
    assert span != SourceRange(Source("x + y", "f.py"), 4, 5)
    assert len({span, SourceRange(source, 4, 5)}) == 1


@pytest.mark.parametrize("text, start, end", [
    ("ab\ncd\n", 3, 5),
    ("ab\ncd\n", 0, 6),       # the whole text is printed as is
    ("ab\ncd\n", 2, 2),       # empty range: no underline
    ("ab\ncd\n", 1, 20),      # past the end
    ("ab\ncd\n", 10, 20),     # starts past the end: nothing
    ("  \n  x  \n", 0, 8),
])
def test_highlight_edge_cases_match_torch(text, start, end):
    assert SourceRange(Source(text), start, end).highlight() == torch_highlight(text, None, 1, start, end)


texts = st.text(alphabet="ab x\n\t", max_size=60)


@settings(max_examples=400, deadline=None)
@given(texts, st.data(), st.sampled_from([None, "f.py"]), st.integers(0, 20))
def test_highlight_matches_torch(text, data, filename, starting_line):
    start = data.draw(st.integers(0, len(text) + 2))
    end = data.draw(st.integers(start, len(text) + 4))
    ours = SourceRange(Source(text, filename, starting_line), start, end).highlight()
    assert ours == torch_highlight(text, filename, starting_line, start, end)


ERRONEOUS_MODULE = '''
import torch


def uses_undefined(x):
    y = x + 1
    return y + undefined_name
'''


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_highlight_matches_a_torch_jit_script_error(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "erroneous.py"
    path.write_text(ERRONEOUS_MODULE)
    spec = importlib.util.spec_from_file_location("erroneous", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(Exception) as info:
        torch.jit.script(module.uses_undefined)
    lines, first_line = inspect.getsourcelines(module.uses_undefined)
    source = Source(textwrap.dedent("".join(lines)), str(path), first_line)
    start = source.text.index("undefined_name")
    span = SourceRange(source, start, start + len("undefined_name"))
    assert span.highlight() in str(info.value)
    assert f'File "{path}", line {first_line + 2}' in span.highlight()
