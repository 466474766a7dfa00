"""The e2e corpus of scripted functions: each with example inputs, run through every execution path.

`CASES` lists Case(function, make_inputs, ...). `make_inputs()` returns fresh arguments (functions may mutate
them). The corpus covers the script language: arithmetic and promotion, control flow, loops with break and
continue, early returns, exceptions, lists, dicts, tuples, strings, Optional refinement, isinstance, casts,
calls between functions, builtins written in TorchScript (`1 - x`), torch.nn.functional, indexing and
in-place updates, fork and wait. `kinds_difference` records where tsjit's inlined graph intentionally differs in
node kinds from torch.jit's (the test asserts exactly that difference).

Functions take tensors as inputs where possible so every path (interpreter, tracing, MLIR) can use them.
"""

# ruff: noqa: UP006, UP035, UP045, UP007, E741, B007, UP031, UP032, F841  (programs written as TorchScript users do)

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from shared_programs import lstm_cell

from tsjit.api import unused


@dataclass
class Case:
    function: Callable
    make_inputs: Callable[[], tuple]
    kinds_difference: dict[str, int] = field(default_factory=dict)  # tsjit count minus torch.jit count
    why: str = ""

    @property
    def name(self) -> str:
        return self.function.__name__


CASES: list[Case] = []


def case(make_inputs: Callable[[], tuple], kinds_difference: dict[str, int] | None = None, why: str = ""):
    def register(fn):
        CASES.append(Case(fn, make_inputs, kinds_difference or {}, why))
        return fn
    return register


def t(*shape: int) -> Callable[[], torch.Tensor]:
    return lambda: torch.randn(*shape)


def args(*factories) -> Callable[[], tuple]:
    """Inputs: callables are called for fresh values, anything else is copied (functions may mutate it)."""
    return lambda: tuple(f() if callable(f) else copy.deepcopy(f) for f in factories)


# ---- the seeds ---------------------------------------------------------------------------------------------------
@case(args(t(4), t(4)))
def seed_f(a, b):
    c = a + b
    d = c * c
    e = torch.tanh(d * c)
    return d + (e + e)


@case(args(t(3), t(3), lambda: torch.tensor(True)))
def seed_if_else(a, b, c):
    d = a + b
    if c:
        e = d + d
    else:
        e = b + d
    return e


@case(args(t(3, 2)))
def seed_loop(x):
    z = x
    for i in range(x.size(0)):
        z = z * z
    return z


case(args(t(2, 4), lambda: (torch.randn(2, 3), torch.randn(2, 3)), t(12, 4), t(12, 3), t(12), t(12)))(lstm_cell)


@case(args(t(5, 2, 4), lambda: (torch.randn(2, 3), torch.randn(2, 3)), t(12, 4), t(12, 3), t(12), t(12)))
def simple_lstm(input, hidden, wih, whh, bih, bhh):
    # type: (Tensor, Tuple[Tensor, Tensor], Tensor, Tensor, Tensor, Tensor) -> Tuple[Tensor, Tensor]
    outputs = []
    inputs = input.unbind(0)
    for seq_idx in range(len(inputs)):
        hidden = lstm_cell(inputs[seq_idx], hidden, wih, whh, bih, bhh)
        hy, _ = hidden
        outputs.append(hy)
    return hidden


@case(args(1))
def exit_transform_continue(i: int):
    while i < 5:
        if i == 3:
            i += 1
            continue
        i += 2
    return i


@case(args(4.0))
def exit_transform_raise(i: float):
    if i < 0:
        raise Exception("Negative input")
    else:
        return math.sqrt(i)
    print(i)  # unreachable


# ---- arithmetic and number promotion ----------------------------------------------------------------------------
@case(args(t(3), t(3)))
def tensor_arith(x, y):
    return x + y, x - y, x * y, x / y, x ** 2, -x, x @ y


@case(args(t(3)))
def scalar_tensor_builtins(x):
    return 1 + x, 2 * x, 1 - x, 3 / x, x // 2, 2.5 * x, 3 > x, 1.0 == x


@case(args(7, 2))
def int_arith(a: int, b: int):
    return a + b, a - b, a * b, a // b, a % b, a / b, -a, a << 1, a >> 1, a & b, a | b, a ^ b


@case(args(7.5, 2.0))
def float_arith(a: float, b: float):
    return a + b, a - b, a * b, a / b, a // b, a % b, a ** b, -a


@case(args(3, 2.5))
def int_float_promotion(a: int, b: float):
    return a + b, a * b, b - a, a / 2, a < b, b >= a


@case(args(5, 3))
def comparisons(a: int, b: int):
    return a < b, a <= b, a > b, a >= b, a == b, a != b


@case(args(3.5))
def math_module(x: float):
    return math.sqrt(x) + math.pi + math.floor(x) + math.exp(0.5) + math.log(x) + math.cos(x) + math.e


@case(args(4, 2.5))
def casts(a: int, b: float):
    return float(a), int(b), bool(a), str(a), int("12"), float("1.5")


@case(args(-3, 4))
def min_max_abs(a: int, b: int):
    return min(a, b), max(a, b), abs(a), min(2.5, 1.5), max([1, 5, 3])


@case(args(True, False))
def bool_logic(a: bool, b: bool):
    return a and b, a or b, not a, (a and not b) or (b and not a)


@case(args(t(3), 2.0))
def tensor_scalar_mixed(x, s: float):
    y = x * s + 1
    return y.sum() * 2, float(y.sum()) + s


# ---- control flow -------------------------------------------------------------------------------------------
@case(args(5))
def if_elif_else(x: int):
    if x < 0:
        r = -1
    elif x == 0:
        r = 0
    elif x < 10:
        r = 1
    else:
        r = 2
    return r


@case(args(t(3), 4))
def while_loop(x, n: int):
    i = 0
    while i < n:
        x = x + 1
        i += 1
    return x


@case(args(t(2)))
def nested_loops(x):
    acc = 0
    for i in range(3):
        for j in range(i):
            acc += i * j
    return x + acc


@case(args(t(2)))
def break_continue(x):
    s = 0
    for i in range(10):
        if i == 2:
            continue
        if i == 7:
            break
        s += i
    return x + s


@case(args(t(2), 3))
def for_with_break_uses_counter(x, n: int):
    for i in range(n):
        if i > 3:
            break
        x = x + i
    return x


@case(args(t(2), 3))
def early_return(x, n: int):
    if n > 2:
        return x
    y = x * 2
    return y


@case(args(t(2), 1))
def return_in_loop(x, n: int):
    for i in range(5):
        if i == n:
            return x * i
    return x


@case(args(t(3), True))
def ternary(x, flag: bool):
    return x * 2 if flag else x - 1


@case(args(t(3), 2))
def while_true_break(x, n: int):
    i = 0
    while True:
        i += 1
        x = x * 2
        if i >= n:
            break
    return x


@case(args(t(2)))
def range_forms(x):
    s = 0
    for i in range(1, 10, 2):
        s += i
    for j in range(2, 5):
        s += j
    for k in range(10, 0, -3):
        s += k
    return x * s


@case(args(3))
def loop_carried_many(n: int):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a, b


@case(args(6))
def continue_in_while(n: int):
    i = 0
    total = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        total += i
    return total


@case(args(t(2), 2))
def if_without_else(x, n: int):
    y = x
    if n > 1:
        y = y * 3
    return y


@case(args(4))
def nested_if_return(n: int):
    if n > 0:
        if n > 3:
            return 2
        return 1
    return 0


@case(args(t(2), 1.0))
def raise_in_branch(x, v: float):
    if v < 0:
        raise ValueError("negative value")
    return x * v


@case(args(t(3)))
def assert_statement(x):
    assert x.dim() == 1, "expected a vector"
    assert x.numel() > 0
    return x


# ---- Optional, isinstance, refinement ---------------------------------------------------------------------------
@case(args(t(2), None))
def optional_tensor_default(x, y: Optional[torch.Tensor] = None):
    if y is None:
        return x
    return x + y


@case(args(t(2), t(2)))
def optional_tensor_given(x, y: Optional[torch.Tensor] = None):
    if y is not None:
        x = x + y
    return x


@case(args(5))
def optional_int_and(x: Optional[int]):
    if x is not None and x > 2:
        return x
    return 0


@case(args(None))
def optional_int_or(x: Optional[int]):
    if x is None or x < 0:
        return -1
    return x


@case(args(3))
def optional_assert_refines(x: Optional[int]):
    assert x is not None
    return x + 1


@case(args(t(2)))
def isinstance_static(x):
    if isinstance(x, torch.Tensor):
        return x + 1
    return x


@case(args(2))
def optional_ternary(x: Optional[int]):
    return x if x is not None else 0


@case(args(None, 3))
def optional_reassign(a: Optional[int], b: int):
    if a is None:
        a = b
    return a * 2


# ---- lists --------------------------------------------------------------------------------------------------
@case(args(t(2)))
def list_ops(x):
    l = [1, 2, 3]
    l.append(4)
    l.insert(0, 5)
    v = l.pop()
    l[1] = 10
    s = 0
    for e in l:
        s += e
    return x * s, len(l), v, l


@case(args(t(2)))
def list_comprehension(x):
    l = [i * 2 for i in range(4)]
    m = [float(v) for v in l]
    return x + sum(l), m


@case(args())
def list_annotated_empty():
    l: List[int] = []
    l.append(3)
    l2 = torch.jit.annotate(List[float], [])
    l2.append(1.5)
    return l, l2


@case(args(t(6)))
def list_of_tensors(x):
    parts = x.chunk(3)
    out = []
    for p in parts:
        out.append(p * 2)
    return torch.cat(out), len(out)


@case(args([3, 1, 2]))
def list_methods(l: List[int]):
    l2 = l.copy()
    l2.sort()
    l2.reverse()
    l2.extend([7, 8])
    return l2, l2.index(7), l2.count(3), 3 in l2, l[1:], l[:-1], l[::2]


@case(args([1.0, 2.0, 3.0]))
def list_sum_max(l: List[float]):
    return sum(l), max(l), min(l), len(l)


@case(args(t(3)))
def list_of_lists(x):
    grid = [[1, 2], [3, 4]]
    total = 0
    for row in grid:
        for v in row:
            total += v
    return x * total, grid[1][0]


@case(args([4, 5, 6]))
def list_unpack(l: List[int]):
    a, b, c = l
    return a + b + c


@case(args([1, 2, 3, 4]))
def list_del_and_clear(l: List[int]):
    del l[0]
    n = len(l)
    l.clear()
    return n, l


# ---- dicts ---------------------------------------------------------------------------------------------------
@case(args(t(2)))
def dict_literal(x):
    d = {"a": x, "b": x * 2}
    out = d["a"] + d["b"]
    for k in d.keys():
        out = out + d[k]
    return out


@case(args())
def dict_annotated():
    d: Dict[str, int] = {}
    d["x"] = 1
    d["y"] = 2
    keys = list(d.keys())
    values = list(d.values())
    return d, keys, values, len(d), "x" in d


@case(args({"a": 1, "b": 2}))
def dict_methods(d: Dict[str, int]):
    d2 = d.copy()
    d2["c"] = 3
    v = d2.get("z", 0)
    p = d2.pop("a")
    items = d2.items()
    total = 0
    for k, val in d2.items():
        total += val
    return total, v, p, len(items)


@case(args(3))
def dict_comprehension(n: int):
    d = {i: i * i for i in range(n)}
    return d


@case(args())
def dict_constructor():
    a = dict()
    a["k"] = torch.ones(1)
    b = dict([("x", 1), ("y", 2)])
    c = dict(b)
    return len(a), b, c


@case(args({1: 2.0, 3: 4.0}))
def dict_int_keys(d: Dict[int, float]):
    s = 0.0
    for k in d:
        s += d[k] * k
    return s


# ---- tuples --------------------------------------------------------------------------------------------------
@case(args(t(4)))
def tuple_unpack(x):
    a, b = x.chunk(2)
    c, d = b, a
    return c - d


@case(args(t(3)))
def tuple_index_slice(x):
    tup = (x, x * 2, x * 3, 4)
    return tup[0] + tup[-2], tup[1:3], tup[3]


@case(args((1, 2.0, "a")))
def tuple_input(tp: Tuple[int, float, str]):
    a, b, c = tp
    return a + b, c


@case(args(t(2)))
def starred_unpack(x):
    a, *rest = (1, 2, 3)
    return x + a, rest


@case(args(t(2)))
def tuple_add(x):
    a = (1, 2)
    b = (3,)
    c = a + b
    return x * c[2], c


@case(args(t(2)))
def tuple_iteration_unrolled(x):
    for v in (1, 2.0, 3):
        x = x * v
    return x


@case(args(t(2), t(2)))
def multiple_assign(x, y):
    a = b = x + y
    return a, b


# ---- strings ------------------------------------------------------------------------------------------------
@case(args("hello"))
def string_methods(s: str):
    t = s + "x"
    return t.upper(), len(t), "l" in t, t[1:3], t.startswith("he"), t.replace("l", "L")


@case(args("a,b,c"))
def string_split_join(s: str):
    parts = s.split(",")
    return "-".join(parts), len(parts)


@case(args(3, 2.5))
def string_format(a: int, b: float):
    return "{} and {}".format(a, b), f"{a}", "%d items" % a, str(b)


@case(args("abc"))
def string_iteration(s: str):
    out = ""
    for ch in s:
        out = ch + out
    return out


# ---- enumerate, zip, range -----------------------------------------------------------------------------------
@case(args(t(2)))
def enumerate_zip(x):
    l = [1.0, 2.0]
    m = [3.0, 4.0]
    s = 0.0
    for i, (a, b) in enumerate(zip(l, m)):
        s += i * a * b
    return x + s


@case(args([5, 6, 7]))
def enumerate_start(l: List[int]):
    total = 0
    for i, v in enumerate(l, 1):
        total += i * v
    return total


@case(args(t(3)))
def iterate_tensor(x):
    s = torch.zeros(())
    for row in x:
        s = s + row
    return s


@case(args(t(2, 3)))
def zip_tensors(x):
    out = []
    for a, b in zip(x, x.flip(0)):
        out.append(a * b)
    return torch.stack(out)


# ---- calls between functions -----------------------------------------------------------------------------------
def helper_double(x):
    return x * 2


def helper_with_defaults(x, scale: float = 2.0, offset: int = 1):
    return x * scale + offset


def helper_two_results(x):
    return x + 1, x - 1


@case(args(t(3)))
def calls_helper(x):
    return helper_double(helper_double(x))


@case(args(t(3)))
def calls_with_defaults_and_keywords(x):
    return helper_with_defaults(x) + helper_with_defaults(x, offset=3) + helper_with_defaults(x, 0.5)


@case(args(t(3)))
def calls_tuple_result(x):
    a, b = helper_two_results(x)
    return a * b


@unused
@torch.jit.unused
def never_called(x):
    return x + 2


@case(args(t(2), False))
def calls_unused_when_flag(x, flag: bool):
    if flag:
        return never_called(x)
    return x


# ---- torch.nn.functional and torch ops ------------------------------------------------------------------------
@case(args(t(2, 3)))
def functional_relu_softmax(x):
    return F.relu(x) + F.softmax(x, dim=1)


@case(args(t(2, 4), t(3, 4), t(3)))
def functional_linear(x, w, b):
    return F.linear(x, w, b)


@case(args(t(1, 2, 5, 5), t(3, 2, 3, 3)))
def functional_conv2d(x, w):
    return F.conv2d(x, w, None, 1, 1)


@case(args(t(1, 2, 4, 4)))
def functional_max_pool2d(x):
    return F.max_pool2d(x, 2)


@case(args(t(1, 2, 4, 4)))
def functional_max_pool2d_indices(x):
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    return out, idx


@case(args(t(2, 4)))
def functional_dropout_eval(x):
    return F.dropout(x, 0.5, False)


@case(args(t(2, 4), t(4), t(4)))
def functional_layer_norm(x, w, b):
    return F.layer_norm(x, [4], w, b)


@case(args(t(2, 4)))
def functional_gelu_tanh(x):
    return F.gelu(x) + F.tanh(x) + F.silu(x)


@case(args(t(3, 5), lambda: torch.tensor([1, 0, 4])))
def functional_cross_entropy(x, target):
    return F.cross_entropy(x, target)


@case(args(t(1, 2, 3, 3)))
def functional_interpolate(x):
    return F.interpolate(x, scale_factor=2.0)


@case(args(t(2, 3, 4), t(3), t(3)))
def functional_batch_norm_eval(x, mean, var):
    return F.batch_norm(x, mean, var, None, None, False)


@case(args(lambda: torch.tensor([[0, 2], [1, 3]]), t(4, 3)))
def functional_embedding(x, w):
    return F.embedding(x, w)


@case(args(t(1, 2, 4, 4)))
def functional_adaptive_avg_pool(x):
    return F.adaptive_avg_pool2d(x, (1, 1))


@case(args(t(3, 4), t(3, 4)))
def functional_losses(x, y):
    return F.mse_loss(x, y), F.l1_loss(x, y), F.smooth_l1_loss(x, y)


@case(args(t(2, 3)))
def functional_pad_normalize(x):
    return F.pad(x, [1, 1]), F.normalize(x)


@case(args(t(2, 3)))
def functional_log_softmax(x):
    return F.log_softmax(x, dim=-1)


@case(args(t(2, 3)))
def tensor_methods(x):
    return x.sum(), x.mean(dim=1), x.max(), x.view(-1), x.reshape(3, 2), x.t(), x.transpose(0, 1), x.abs()


@case(args(t(2, 3)))
def tensor_properties(x):
    # x.shape is a List[int] and x.dtype an int in TorchScript: compare what both agree on
    return x.shape[0], x.size(1), x.dim(), x.ndim, x.numel(), x.dtype == torch.float32, x.T, x.is_cuda


@case(args(t(2, 3)))
def tensor_casts(x):
    return x.float(), x.double(), x.long(), x.int(), x.to(torch.float64), x.type(torch.int32)


@case(args(t(2, 3)))
def tensor_factories(x):
    a = torch.zeros(2, 3)
    b = torch.ones([2, 3], dtype=torch.float32)
    c = torch.full((2, 3), 1.5)
    d = torch.arange(6).view(2, 3)
    e = torch.eye(3)
    return x + a + b + c + d, e


@case(args(t(3, 4)))
def tensor_reductions(x):
    values, indices = x.max(dim=1)
    return values, indices, x.argmax(), x.std(), x.var(dim=0), x.prod()


@case(args(t(2, 3), t(2, 3)))
def torch_functions(x, y):
    return torch.cat([x, y]), torch.stack([x, y], dim=1), torch.where(x > 0, x, y), torch.clamp(x, -0.5, 0.5)


@case(args(t(2, 3)))
def tensor_comparisons(x):
    return (x > 0).sum(), (x == x).all(), (x < 0).any(), torch.eq(x, x), x.ne(0)


@case(args(t(3, 3)))
def matmul_family(x):
    return x.mm(x), torch.matmul(x, x), x @ x, torch.bmm(x.unsqueeze(0), x.unsqueeze(0))


@case(args(t(2, 3)))
def op_aliases(x):
    return torch.absolute(x), torch.multiply(x, 2), torch.greater(x, 0), torch.clip(x, -1, 1), torch.negative(x)


@case(args(t(4)))
def tensor_to_number(x):
    n = int(x.numel())
    f = float(x.sum())
    b = bool(x.sum() > 100)
    return n, f, b, x.sum().item()


# ---- indexing --------------------------------------------------------------------------------------------------
@case(args(t(4, 4)))
def tensor_indexing(x):
    return x[0], x[1:3], x[:, 0], x[..., 1], x[-1], x[None, 1], x[::2, 1:]


@case(args(t(4, 4), lambda: torch.tensor([0, 2])))
def tensor_advanced_indexing(x, idx):
    return x[idx], x[:, idx], x[[0, 1]], x[x > 0]


@case(args(t(4, 4)))
def tensor_index_assign(x):
    x[0] = 1.0
    x[1:2] = x[0:1]
    x[:, 3] = 2
    x[2, 2] = x[0, 0]
    return x


@case(args(t(4), lambda: torch.tensor([1, 3])))
def tensor_index_put(x, idx):
    x[idx] = 0.0
    return x


@case(args(t(3, 3)))
def tensor_aug_assign_slices(x):
    x[0] += 1
    x[1:] *= 2
    return x


@case(args([1, 2, 3]))
def list_aug_assign_item(l: List[int]):
    l[0] += 5
    l[1] *= 2
    return l


# ---- augmented assignment and in-place ops ---------------------------------------------------------------------
@case(args(t(3)))
def augmented_assignment(x):
    x += 1
    x *= 2
    y = x
    y -= x
    return y, x


@case(args(t(3)))
def inplace_ops(x):
    y = x.clone()
    y.add_(1)
    y.mul_(2)
    y.clamp_(0, 3)
    y.relu_()
    return y


@case(args(2, 3))
def int_augmented(a: int, b: int):
    a += b
    a *= 2
    a -= 1
    return a


@case(args([1, 2]))
def list_augmented(l: List[int]):
    l += [3, 4]
    return l


# ---- printing, annotate, misc ------------------------------------------------------------------------------------
@case(args(3))
def print_values(x: int):
    print("value", x, 2.5, [1, 2])
    return x


@case(args(t(2)))
def annotate_optional(x):
    y = torch.jit.annotate(Optional[torch.Tensor], None)
    if y is None:
        y = x
    return y


@case(args(t(2), 3))
def type_comment_signature(x, n):
    # type: (Tensor, int) -> Tuple[Tensor, int]
    return x, n + 1



@case(args(t(2), 3))
def variable_annotations(x, n: int):
    total: float = 0.0
    for i in range(n):
        total += i
    return x * total


@case(args(4))
def divmod_and_friends(a: int):
    return divmod(a, 3), hash("a") == hash("a")


@case(args(3))
def int_true_division_by_one(a: int):
    """torch.jit returns 3 here (its peephole drops `/ 1` on ints); Python and tsjit return 3.0."""
    return a / 1, a // 1 * 1 + 0


@case(args(t(2)))
def no_grad_ops(x):
    return x.detach(), x.clone(), x.contiguous()


class Point(NamedTuple):
    x: float
    y: float


@case(args(1.5, 2.5))
def named_tuple(a: float, b: float):
    p = Point(a, b)
    q = Point(x=b, y=a)
    return p.x + q.y, p


@case(args(t(3, 3)))
def torch_max_named_tuple(x):
    result = torch.max(x, dim=0)
    return result.values, result[1]


@case(args(2))
def constant_folding(n: int):
    a = 2 * 3 + 1
    b = "AssertionError: " + "x"
    c = -n
    return a + c, b


@case(args(t(3)))
def conditional_expression_refinement(x):
    y: Optional[int] = None
    for i in range(3):
        if i == 1:
            y = i
    return x * (y if y is not None else 0)


@case(args(t(2), 5))
def mixed_types_in_branches_unused(x, n: int):
    if n > 3:
        z = 1
    else:
        z = "no"
    return x


@case(args(t(2)))
def shadowed_builtin_names(x):
    len_ = len([1, 2])
    list_ = list([1, 2])
    return x * len_, list_


@case(args(t(2, 3)))
def chained_methods(x):
    return x.relu().sum(dim=1).mean().neg().exp()


@case(args(t(3)))
def nested_function_calls_in_loop(x):
    for _ in range(3):
        x = helper_double(x) - x
    return x


@case(args(t(2, 3)))
def torch_math_builtins(x):
    return torch.sqrt(x.abs()), torch.exp(x), torch.log1p(x.abs()), torch.sin(x), torch.pow(x, 2)


@case(args(t(5)))
def sort_and_topk(x):
    values, indices = torch.sort(x)
    top, where = torch.topk(x, 2)
    return values, indices, top, where


@case(args(t(2, 3, 4)))
def shape_manipulation(x):
    return x.permute(2, 0, 1), x.flatten(1), x.unsqueeze(0).squeeze(0), x.expand(2, 2, 3, 4), x.repeat(1, 2, 1)


@case(args(t(2, 6)))
def split_and_chunk(x):
    a, b, c = x.split(2, dim=1)
    d, e = x.chunk(2, dim=1)
    return a + b + c, d * e


@case(args(t(3), 2))
def loop_list_accumulate(x, n: int):
    results: List[torch.Tensor] = []
    for i in range(n):
        results.append(x + i)
    return torch.stack(results)


@case(args(t(3)))
def list_literal_in_call(x):
    return torch.zeros([2, 3]), x.sum(dim=[0]), torch.tensor([1.0, 2.0, 3.0]) + x


@case(args(t(4)))
def tensor_list_indexing(x):
    parts = list(x.chunk(2))
    first = parts[0]
    parts[1] = parts[1] * 2
    return first, parts[-1]


@case(args(t(3), 2))
def loop_with_if_assigning_new_var(x, n: int):
    y = x
    for i in range(n):
        if i % 2 == 0:
            tmp = y + 1
        else:
            tmp = y - 1
        y = tmp
    return y


@case(args(t(3)))
def bitwise_on_tensors(x):
    a = x > 0
    b = x < 0.5
    return a & b, a | b, a ^ b, ~a


@case(args(8))
def int_bit_ops(a: int):
    return a & 3, a | 1, a ^ 5, a << 2, a >> 1


@case(args(t(2), 1))
def early_return_in_nested_loops(x, target: int):
    for i in range(3):
        for j in range(3):
            if i + j == target:
                return x * (i * 10 + j)
    return x


@case(args(t(2), 3))
def break_in_while_with_else_state(x, limit: int):
    count = 0
    while count < 100:
        count += 1
        if count >= limit:
            break
        x = x + 1
    return x, count


@case(args(t(3)))
def with_uninitialized_branch(x):
    if bool(x.sum() > 1000):
        raise RuntimeError("too big")
    else:
        y = x * 2
    return y


@case(args(3))
def range_list_and_len(n: int):
    r = list(range(n))
    return r, len(r), sum(r)


@case(args(t(3)))
def sequential_reassign_types_same(x):
    y = x.sum()
    y = y * 2
    y = y + x
    return y


@case(args(t(4)))
def torch_functional_split(x):
    a, b = torch.split(x, 2)
    return torch.broadcast_tensors(a, b)


@case(args(t(3), 2.0))
def default_float_arg_int(x, p: float = 2):
    return x * p


@case(args(t(3)))
def is_scripting_static(x):
    if torch.jit.is_scripting():
        return x + 1
    # not compiled: only the branch a static condition selects is
    return torch.from_numpy(x.numpy()) + 1


@case(args(2, 3))
def pow_variants(a: int, b: int):
    # int ** int is a float in TorchScript
    return float(pow(a, b)), a ** -1, 2.0 ** b, math.pow(a, b)


@case(args(t(2)))
def string_comparisons(x):
    s = "abc"
    if s == "abc" and s != "abd" and s < "b":
        return x * 2
    return x


@case(args(t(2, 3)))
def sum_of_list_comprehension(x):
    return sum([float(x[i].sum()) for i in range(x.size(0))])


@case(args([2, 4, 6]))
def all_any(l: List[int]):
    return all([v % 2 == 0 for v in l]), any([v > 5 for v in l])


@case(args(t(3)))
def loop_over_dict_items(x):
    weights = {"a": 1.0, "b": 2.0}
    for name, w in weights.items():
        x = x * w
    return x


@case(args(t(3)))
def nested_ternary(x):
    n = x.numel()
    return 1 if n > 5 else 2 if n > 2 else 3


@case(args(t(2)))
def comprehension_over_tensor_list(x):
    ts = [x, x * 2, x * 3]
    return [v.sum() for v in ts]


@case(args(3))
def while_with_complex_condition(n: int):
    i = 0
    j = 10
    while i < n and j > 5 or i == 0:
        i += 1
        j -= 1
    return i, j


@case(args(t(3, 2, 8), t(3, 2, 8), t(3, 2, 8), t(24, 8), t(24), t(8, 8), t(8)))
def functional_multi_head_attention(q, k, v, in_weight, in_bias, out_weight, out_bias):
    return F.multi_head_attention_forward(q, k, v, 8, 2, in_weight, in_bias, None, None, False, 0.0, out_weight,
                                          out_bias, training=False)


@case(args(t(2, 4, 3, 3)))
def functional_norms(x):
    return F.group_norm(x, 2), F.instance_norm(x), F.local_response_norm(x, 2)


@case(args(t(2, 6)))
def functional_activations(x):
    return (F.hardtanh(x), F.leaky_relu(x, 0.1), F.elu(x), F.glu(x), F.softplus(x), F.relu6(x), F.hardswish(x),
            F.mish(x), F.logsigmoid(x), F.softsign(x), F.tanhshrink(x), F.threshold(x, 0.1, 0.0), F.celu(x),
            F.selu(x), F.prelu(x, torch.ones(1)))


@case(args(t(1, 2, 4, 4)))
def functional_unfold_fold(x):
    return F.fold(F.unfold(x, 2), (4, 4), 2), F.pixel_shuffle(x.repeat(1, 2, 1, 1), 2)


@case(args(t(3, 4), t(3, 4)))
def functional_distances(x, y):
    return F.cosine_similarity(x, y), F.pairwise_distance(x, y)


@case(args(t(3, 5), lambda: torch.tensor([1, 0, 4]), t(3, 5)))
def functional_more_losses(logits, target, y):
    x = F.log_softmax(logits, 1)
    return (F.nll_loss(x, target), F.kl_div(x, x, reduction="batchmean"),
            F.binary_cross_entropy_with_logits(y, torch.ones_like(y)), F.huber_loss(y, y))


@case(args(lambda: torch.tensor([0, 3, 1])))
def functional_one_hot(t):
    return F.one_hot(t, 5)


@case(args(t(1, 2, 4, 4)))
def functional_pools(x):
    return F.avg_pool2d(x, 2), F.max_pool1d(x[0], 2), F.adaptive_max_pool2d(x, 1), F.lp_pool2d(x, 2.0, 2)


@case(args(t(1, 3, 4, 4), t(3, 2, 3, 3)))
def functional_convolutions(x, w):
    return F.conv_transpose2d(x, w), F.conv1d(x[:, :, 0], w[:, :, 0].transpose(0, 1)), F.avg_pool1d(x[0], 2)


@case(args(t(3, 3), t(3, 3)))
def torch_functional_module(x, y):
    return torch.norm(x), torch.einsum("ij,jk->ik", x, y), torch.cdist(x, y), torch.tensordot(x, y, 1)


@case(args(t(1, 2, 3, 3)))
def functional_interpolate_modes(x):
    return F.interpolate(x, size=(6, 6), mode="bilinear", align_corners=False), F.upsample(x, scale_factor=2.0)


@case(args(t(1, 2, 4, 4), lambda: torch.eye(2, 3).unsqueeze(0)))
def functional_grid_sample(x, theta):
    grid = F.affine_grid(theta, [1, 2, 4, 4], align_corners=False)
    return F.grid_sample(x, grid, align_corners=False)


@case(args(t(2, 3, 4), t(3), t(3)))
def functional_batch_norm_training(x, mean, var):
    return F.batch_norm(x, mean, var, training=True)


@case(args(t(2, 5)))
def functional_softmin_and_dtype(x):
    return F.softmin(x, 1), F.log_softmax(x, 1, dtype=torch.float64)


@case(args(lambda: torch.tensor([1, 2, 4, 5, 4, 3]), t(10, 3)))
def functional_embedding_bag(x, w):
    return F.embedding_bag(x.view(2, 3), w)


# ---- Union, Any, refinement of containers ---------------------------------------------------------------------
@case(args(3))
def union_isinstance(x: Union[int, str]):
    if isinstance(x, int):
        return x + 1
    return len(x)


@case(args([1, 2, 3]))
def jit_isinstance_container(x: Any):
    if torch.jit.isinstance(x, List[int]):
        return len(x)
    return 0


@case(args(t(2, 3)))
def tensor_tolist(x):
    l: List[List[float]] = x.tolist()
    return l


@case(args(t(3)))
def tensor_item(x):
    return x.sum().item() + 1


@case(args([1, 2]))
def optional_list(x: Optional[List[int]]):
    if x is None:
        return 0
    return len(x)


@case(args(None))
def union_with_none(x: Union[int, None]):
    if x is not None:
        return x
    return 1


@case(args([1, None, 3]))
def list_of_optionals(xs: List[Optional[int]]):
    s = 0
    for v in xs:
        if v is not None:
            s += v
    return s


@case(args({"a": 2}))
def dict_get_optional(d: Dict[str, int]):
    v = d.get("b")
    if v is None:
        return d["a"]
    return v


@case(args(t(2, 3)))
def tuple_return_annotation(x) -> Tuple[int, int]:
    return x.size(0), x.size(1)


@case(args(t(2)))
def device_and_dtype_arguments(x):
    y = torch.zeros(2, dtype=x.dtype, device=x.device)
    return y + x, x.device.type


@case(args(3))
def numbers_to_tensors(n: int):
    return torch.tensor(n), torch.tensor([n, n]), torch.tensor(2.5)


@case(args(t(2), None))
def two_optionals(x: Optional[torch.Tensor], y: Optional[torch.Tensor]):
    if x is not None and y is not None:
        return x + y
    elif x is not None:
        return x
    return torch.zeros(1)


@case(args(2.5))
def isinstance_of_several_types(x: Union[int, float, str]):
    if isinstance(x, (int, float)):
        return 1
    return 2


@case(args(4))
def assert_isinstance_refines(x: Union[int, List[int]]):
    assert isinstance(x, int)
    return x + 1


# ---- fork and wait (eager runs forks synchronously) ----------------------------------------------------------------
def helper_scaled(x, k: int):
    return x * k


def helper_forks_again(x):
    return torch.jit.wait(torch.jit.fork(torch.neg, x)) * 2


@case(args(t(3)))
def fork_and_wait(x):
    fut = torch.jit.fork(helper_scaled, x, 3)
    return torch.jit.wait(fut) + x


@case(args(t(2, 3)))
def forks_in_a_loop(x):
    futs = [torch.jit.fork(helper_scaled, x, k) for k in range(3)]
    total = torch.jit.wait(torch.jit.fork(torch.add, x, x, alpha=2))
    for fut in futs:
        total = total + torch.jit.wait(fut)
    return total


@case(args(t(3)))
def nested_forks(x):
    fut = torch.jit.fork(helper_forks_again, x)
    return torch.jit.wait(fut) - x
