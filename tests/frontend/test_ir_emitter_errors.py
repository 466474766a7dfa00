"""Compile errors: each names what went wrong and underlines where (`~~~~ <--- HERE`), as TorchScript does.

Every case is TorchScript source compiled with tsjit.CompilationUnit; the test checks the first line of the
message and the exact source text the `~` marks underline. `test_same_message_as_torch_jit` holds tsjit to
torch.jit's wording (the oracle) for every case, and to its underlined span where the parsers' ranges agree.
"""

from __future__ import annotations

import re

import pytest
import torch

from tsjit.api import CompilationUnit, script
from tsjit.errors import CompileError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own

# (name, source, first line of the message, the underlined source text)
CASES = [
    ('undefined_value',
     'def f(x):\n    return x + undefined_name\n',
     'undefined value undefined_name:',
     'undefined_name'),
    ('branch_type_mismatch',
     "def f(x: int):\n    if x > 1:\n        z = 1\n    else:\n        z = 'a'\n    return z\n",
     'Type mismatch: z is set to type int in the true branch and type str in the false branch:',
     'if x > 1:'),
    ('wrong_arity',
     'def f(x):\n    return torch.add(x)\n',
     'Arguments for call are not valid.',
     'torch.add'),
    ('bad_operand',
     "def f(x):\n    return x + 'a'\n",
     'Arguments for call are not valid.',
     "x + 'a'"),
    ('break_outside_loop',
     'def f(x):\n    break\n    return x\n',
     "SyntaxError: 'break' outside loop:",
     'break'),
    ('continue_outside_loop',
     'def f(x):\n    continue\n    return x\n',
     "SyntaxError: 'continue' outside loop:",
     'continue'),
    ('return_type_mismatch',
     "def f(x: int):\n    if x > 1:\n        return 1\n    return 'a'\n",
     'Previous return statement returned a value of type int but this return statement returns a value of type '
     'str:',
     "return 'a'"),
    ('empty_list_append_int',
     'def f(x):\n    l = []\n    l.append(1)\n    return l\n',
     'aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!):',
     'l.append'),
    ('no_attribute',
     'def f(x: int):\n    return x.foo\n',
     "'int' object has no attribute or method 'foo'.:",
     'x.foo'),
    ('call_non_callable',
     'def f(x: int):\n    return x(1)\n',
     "cannot call a value of type 'int':",
     'x'),
    ('not_iterable',
     'def f(x: int):\n    for i in x:\n        pass\n    return x\n',
     "'int' object is not iterable:",
     'for i in x:'),
    ('tuple_index_out_of_range',
     'def f(x):\n    t = (1, 2)\n    return t[5]\n',
     'Tuple index out of range. Tuple is length 2 and index is 5:',
     't[5]'),
    ('too_many_values_to_unpack',
     'def f(x):\n    a, b = (1, 2, 3)\n    return a\n',
     'too many values to unpack: need 2 but found 3:',
     'a, b'),
    ('too_few_values_to_unpack',
     'def f(x):\n    a, b, c = (1, 2)\n    return a\n',
     'need 3 values to unpack but found only 2:',
     'a, b, c'),
    ('defined_in_one_branch',
     'def f(x: int):\n    if x > 0:\n        y = 1\n    return y\n',
     'y is not defined in the false branch:',
     'if x > 0:'),
    ('annotated_variable_mismatch',
     "def f(x):\n    y: int = 'a'\n    return y\n",
     "Variable 'y' is annotated with type int but is being assigned to a value of type str:",
     'y'),
    ('optional_not_refined',
     'def f(x: Optional[int]):\n    return x + 1\n',
     'Arguments for call are not valid.',
     'x + 1'),
    ('range_of_float',
     'def f(x: float):\n    for i in range(x):\n        pass\n    return x\n',
     'all inputs of range must be ints, found float in argument 0:',
     'range(x)'),
    ('getattr_non_literal',
     'def f(x, name: str):\n    return getattr(x, name)\n',
     "getattr's second argument must be a string literal:",
     'getattr(x, name)'),
    ('raise_non_exception',
     'def f(x):\n    raise 1\n',
     'exceptions must derive from BaseException:',
     'raise 1'),
    ('missing_return',
     'def f(x: int) -> int:\n    if x > 1:\n        return 1\n',
     'Function was not annotated as having type None, but does not return along all paths:',
     'def f(x: int) -> int:'),
    ('unknown_keyword',
     'def f(x):\n    return torch.sum(x, bogus=1)\n',
     'Arguments for call are not valid.',
     'torch.sum'),
    ('dict_keys_mixed',
     "def f(x):\n    return {1: 2, 'a': 3}\n",
     'Dict keys must contain only a single type. Expected: int but found str instead:',
     "'a'"),
    ('starred_alone',
     'def f(x):\n    *a, = (1, 2)\n    return a\n',
     'A Starred expression may only appear on the lhs within the presence of another non-starred expression:',
     '*a'),
    ('del_slice',
     'def f(x: List[int]):\n    del x[1:2]\n    return x\n',
     'del statements only support deletion at a single index, slicing is not supported (see '
     'https://github.com/pytorch/pytorch/issues/31430):',
     'x[1:2]'),
    ('isinstance_arity',
     'def f(x):\n    return isinstance(x)\n',
     'isinstance expected exactly 2 arguments but found 1:',
     'isinstance(x)'),
    ('ternary_mismatch',
     "def f(x: bool):\n    return 1 if x else 'a'\n",
     "if-expression's true branch has type int but false branch has type str:",
     "1 if x else 'a'"),
    ('unknown_builtin',
     'def f(x):\n    return torch.nonexistent_op(x)\n',
     'object has no attribute nonexistent_op:',
     'torch.nonexistent_op'),
    ('subscript_int',
     'def f(x: int):\n    return x[0]\n',
     "'int' object is not subscriptable:",
     'x[0]'),
    ('str_plus_int',
     'def f(s: str):\n    return s + 1\n',
     'Arguments for call are not valid.',
     's + 1'),
    ('tuple_item_assignment',
     'def f(x):\n    t = (1, 2)\n    t[0] = 3\n    return t\n',
     'Tuple[int, int] does not support subscripted assignment:',
     't[0]'),
    ('list_annotation_mismatch',
     "def f(x):\n    l: List[int] = ['a']\n    return l\n",
     'List type annotation `List[int]` did not match the types of the given list elements, which were unified '
     'to str:',
     "['a'"),
    ('annotate_outer_variable',
     'def f(x: int):\n    y = 1\n    if x > 0:\n        y: int = 2\n    return y\n',
     "Attempting to declare and annotate the type of variable 'y' but it is already defined in an outer block:",
     'y'),
    ('with_non_object',
     'def f(x):\n    with x:\n        pass\n    return x\n',
     'With item expression must return an object:',
     'x'),
    ('enumerate_no_args',
     'def f(x):\n    for i in enumerate():\n        pass\n    return x\n',
     'enumerate expected at least 1 arguments, got 0:',
     'enumerate()'),
    ('zip_no_args',
     'def f(x):\n    for i in zip():\n        pass\n    return x\n',
     'zip expected at least 1 arguments, got 0:',
     'zip()'),
    ('hasattr_non_literal',
     'def f(x, n: str):\n    return hasattr(x, n)\n',
     "hasattr's second argument must be a string literal:",
     'n'),
    ('recursive_call',
     'def f(n: int) -> int:\n    return f(n - 1)\n',
     "function 'f' is called recursively. Recursive calls are not supported:",
     'f'),
    ('unknown_type',
     'def f(x: Lisst[int]):\n    return x\n',
     'Unknown type constructor Lisst:',
     'Lisst[int]'),
    ('range_too_many_args',
     'def f(x):\n    for i in range(1, 2, 3, 4):\n        pass\n    return x\n',
     'range expected at most 3 arguments, got 4:',
     'range(1, 2, 3, 4)'),
    ('none_for_tensor_return',
     'def f(x) -> Tensor:\n    return None\n',
     'Return value was annotated as having type Tensor but is actually of type NoneType:',
     'return None'),
    ('multidim_index_list',
     'def f(x: List[int]):\n    return x[0, 1]\n',
     'Unsupported operation: attempted to use multidimensional indexing on a non-tensor type:',
     'x[0, 1]'),
    ('print_keywords',
     "def f(x):\n    print(x, sep='')\n    return x\n",
     "print doesn't accept any keyword arguments:",
     'print'),
    ('int_dunder_method',
     'def f(a: int):\n    return a.__abs__()\n',
     "'int' object has no attribute or method '__abs__'.:",
     'a.__abs__'),
    ('list_mixed_types_to_int_list',
     'def f(x):\n    l: List[int] = [1, 2.5]\n    return l\n',
     'List type annotation `List[int]` did not match the types of the given list elements, which were unified '
     'to Union[float, int]:',
     '[1, 2.5'),
    ('cast_list_to_int',
     'def f(x: List[int]):\n    return int(x)\n',
     'Arguments for call are not valid.',
     'int'),
    ('tuple_slice_variable',
     'def f(x, i: int):\n    t = (1, 2, 3)\n    return t[i:]\n',
     'tuple slice indices must be integer constants:',
     't[i:]'),
    ('unknown_type_constructor',
     'def f(x: Lisst[int]):\n    return x\n',
     'Unknown type constructor Lisst:',
     'Lisst[int]'),
    ('for_loop_float_list_sum_str',
     'def f(x: List[str]):\n    return sum(x)\n',
     'Arguments for call are not valid.',
     'sum'),
    ('dict_value_type_mismatch',
     "def f(x):\n    d: Dict[str, int] = {'a': 'b'}\n    return d\n",
     'Type annotation was inferred to be `Dict[str, int]`, but the type of values given by the dict literal is '
     'str:',
     "{'a': 'b'"),
    ('tuple_index_non_int',
     "def f(x):\n    t = (1, 2)\n    return t['a']\n",
     'tuple index must be an integer:',
     "t['a']"),
    ('reassign_in_loop',
     "def f(x: int):\n    y = 1\n    for i in range(3):\n        y = 'a'\n    return y\n",
     "Variable 'y' previously had type int but is now being assigned to a value of type str",
     'y'),
    ('assign_sugared_value',
     'def f(x):\n    y = 1\n    for i in range(3):\n        y = torch\n    return y\n',
     "Cannot re-assign 'y' to a value of type python value of type 'module' because y is not a first-class "
     'value.  Only reassignments to first-class values are allowed:',
     'y'),
]

# the text parser's ranges for calls, subscripts and defs include the closing bracket / the `def` keyword,
# where torch's C++ parser stops at the last argument / starts at the name (ranges are the parser's business)
RANGE_CONVENTIONS_DIFFER = {
    "range_of_float", "getattr_non_literal", "missing_return", "isinstance_arity", "enumerate_no_args",
    "zip_no_args", "range_too_many_args", "tuple_slice_variable", "dict_value_type_mismatch",
}


def underlined(message: str) -> str | None:
    """The source text above the first line of `~` marks."""
    lines = message.splitlines()
    for i, line in enumerate(lines):
        if "~" in line and re.fullmatch(r"\s*~+( <--- HERE)?", line):
            start = len(line) - len(line.lstrip())
            return lines[i - 1][start:start + line.count("~")]
    return None


def compile_error(source: str) -> CompileError:
    with pytest.raises(CompileError) as info:
        CompilationUnit(source)
    return info.value


@pytest.mark.parametrize("name,source,first_line,span", CASES, ids=[c[0] for c in CASES])
def test_error_names_the_problem_and_underlines_it(name, source, first_line, span):
    message = str(compile_error(source))
    assert message.strip().splitlines()[0] == first_line
    assert "<--- HERE" in message
    assert underlined(message) == span


@pytest.mark.parametrize("name,source,first_line,span", CASES, ids=[c[0] for c in CASES])
def test_same_message_as_torch_jit(name, source, first_line, span):
    with pytest.raises(Exception) as info:
        torch.jit.CompilationUnit(source)
    theirs = str(info.value)
    assert theirs.strip().splitlines()[0] == first_line
    if name not in RANGE_CONVENTIONS_DIFFER:
        assert underlined(theirs) == span


def test_at_least_forty_cases():
    assert len(CASES) >= 40


# ---- errors from Python functions -------------------------------------------------------------------------------
def recursive(n: int) -> int:
    if n <= 1:
        return 1
    return n * recursive(n - 1)


def ping(x):
    return pong(x)


def pong(x):
    return ping(x)


def test_recursion_is_rejected_at_the_call():
    with pytest.raises(CompileError) as info:
        script(recursive)
    message = str(info.value)
    assert message.startswith("function 'recursive' is called recursively. Recursive calls are not supported")
    assert underlined(message) == "recursive"


def test_mutual_recursion_is_rejected():
    with pytest.raises(CompileError, match="function 'ping' is called recursively"):
        script(ping)


def uses_undefined(x):
    return x + not_defined_anywhere  # noqa: F821


def test_python_function_error_names_the_file_and_line():
    with pytest.raises(CompileError) as info:
        script(uses_undefined)
    message = str(info.value)
    assert "undefined value not_defined_anywhere" in message
    assert f'File "{__file__}"' in message
    assert underlined(message) == "not_defined_anywhere"


def calls_helper_with_error(x):
    return helper_with_error(x)


def helper_with_error(x: int):
    return x.no_such_method()


def test_error_in_a_called_function_points_into_it():
    with pytest.raises(CompileError) as info:
        script(calls_helper_with_error)
    assert underlined(str(info.value)) == "x.no_such_method"
