"""Regenerate the IR text corpus: `python tests/ir/corpus/generate.py` writes graphs/<name>.ir.

Each file holds the text torch.jit prints for one graph (`str(graph)`, with `# file:line:col` comments).
Absolute paths in those comments are shortened (the corpus path relative to the repository root, torch's
own files relative to site-packages) so the stored files do not depend on where the repository lives. Tests
read the stored files, and when torch.jit is available also call `generate_all()` to compare against the live
oracle.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPHS_DIR = os.path.join(HERE, "graphs")
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

if HERE not in sys.path:
    sys.path.insert(0, HERE)

import programs  # noqa: E402  (needs HERE on sys.path)


def normalize_paths(text: str) -> str:
    """Shorten the absolute paths of `# path:line:col` comments so the text is machine independent."""
    text = text.replace(REPO_ROOT + os.sep, "")
    return re.sub(r"# [^\n]*?site-packages/", "# ", text)


def scripted_functions() -> Iterator[tuple[str, str]]:
    for fn in programs.SCRIPTED_FUNCTIONS:
        yield fn.__name__, str(torch.jit.script(fn).graph)


def scripted_modules() -> Iterator[tuple[str, str]]:
    for name, (factory, inlined, frozen) in programs.SCRIPTED_MODULES.items():
        module = torch.jit.script(factory())
        yield name, str(module.forward.graph)
        if inlined:
            yield name + "_inlined", str(module.inlined_graph)
        if frozen:
            yield name + "_frozen", str(torch.jit.freeze(module.eval()).forward.graph)


def traced() -> Iterator[tuple[str, str]]:
    for name, (target, make_inputs) in programs.TRACED.items():
        if isinstance(target, type):
            target = target()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", torch.jit.TracerWarning)
            yield name, str(torch.jit.trace(target, make_inputs()).graph)


@contextlib.contextmanager
def cpu_fusion() -> Iterator[None]:
    """Turn on the TensorExpr fuser for CPU (interpreted kernels, no LLVM), restoring the settings after."""
    old_fuse = torch._C._jit_can_fuse_on_cpu()
    old_llvm = torch._C._jit_get_te_must_use_llvm_cpu()
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_set_te_must_use_llvm_cpu(False)
    try:
        yield
    finally:
        torch._C._jit_override_can_fuse_on_cpu(old_fuse)
        torch._C._jit_set_te_must_use_llvm_cpu(old_llvm)


def fused() -> Iterator[tuple[str, str]]:
    """The optimized graphs the profiling executor ran: after one run (prim::profile nodes), after fusion."""
    with cpu_fusion():
        for name, (fn, make_inputs, requires_grad) in programs.FUSED.items():
            scripted = torch.jit.script(fn)
            inputs = [x.requires_grad_() if requires_grad and isinstance(x, torch.Tensor) else x
                      for x in make_inputs()]
            scripted(*inputs)
            yield name + "_profiled", str(torch.jit.last_executed_optimized_graph())
            for _ in range(5):
                scripted(*inputs)
            yield name, str(torch.jit.last_executed_optimized_graph())


def every_attribute_kind() -> str:
    """A hand-built graph whose nodes carry attributes of every kind the printer knows."""
    graph = torch._C.Graph()
    x = graph.addInput("x")
    x.setType(torch._C.TensorType.get())
    sub = torch._C.Graph()
    sub.registerOutput(sub.addInput("a"))
    node = graph.create("my::every_kind", [x], 1)
    _set_attributes(node, sub)
    graph.insertNode(node)
    graph.registerOutput(node.output())
    return str(graph)


def nested_subgraphs() -> str:
    """Subgraph nodes in a block and in another subgraph: `with` sections nest and number per graph."""
    graph = torch._C.Graph()
    x = graph.addInput("x")
    flag = graph.addInput("flag")
    flag.setType(torch._C.BoolType.get())
    branch = graph.create("prim::If", [flag], 1)
    graph.insertNode(branch)
    then_block, else_block = branch.addBlock(), branch.addBlock()
    with graph.insert_point_guard(then_block):
        then_block.registerOutput(_fusion_group(graph, [x], _relu_graph(nested=True)))
    with graph.insert_point_guard(else_block):
        else_block.registerOutput(_fusion_group(graph, [x], _relu_graph(nested=False)))
    graph.registerOutput(_fusion_group(graph, [branch.output()], _relu_graph(nested=False)))
    return str(graph)


def _relu_graph(nested: bool) -> torch._C.Graph:
    """`relu(a)`, computed by a fusion group of its own when `nested`."""
    graph = torch._C.Graph()
    a = graph.addInput("a")
    if nested:
        graph.registerOutput(_fusion_group(graph, [a], _relu_graph(nested=False)))
    else:
        relu = graph.insertNode(graph.create("aten::relu", [a], 1))
        graph.registerOutput(relu.output())
    return graph


def _fusion_group(graph: torch._C.Graph, inputs: list, subgraph: torch._C.Graph) -> torch._C.Value:
    node = graph.insertNode(graph.create("prim::FusionGroup", inputs, 1))
    node.g_("Subgraph", subgraph)
    return node.output()


def _set_attributes(node: torch._C.Node, sub: torch._C.Graph) -> None:
    node.i_("int", -3).f_("float", 0.1).f_("integral_float", 2.0).f_("nan", float("nan"))
    node.f_("inf", float("-inf")).c_("complex", complex(1.5, -2.0)).s_("string", "a\n\"b\" é")
    node.t_("scalar_tensor", torch.tensor(3.5)).t_("small_tensor", torch.tensor([1, 2, 3]))
    node.t_("big_tensor", torch.zeros(20)).g_("graph", sub).is_("ints", [1, 2, 3]).is_("no_ints", [])
    node.fs_("floats", [1.0, 0.5, float("inf")]).ss_("strings", ["x", "y z"]).ts_("tensors", [torch.ones(2)])
    node.gs_("graphs", [sub, sub]).ty_("type", torch._C.ListType(torch._C.IntType.get()))
    node.tys_("types", [torch._C.IntType.get(), torch._C.OptionalType(torch._C.TensorType.get())])
    node.ival_("tuple", (1, "x", 2.5, (True, None))).ival_("dict", {"a": 1, "b": 2})
    node.ival_("device", torch.device("cpu")).ival_("optional_list", [1, None])


def generate_all() -> dict[str, str]:
    """Every corpus graph's text by name, freshly produced by torch.jit."""
    torch.manual_seed(0)
    sources: list[Callable[[], Iterator[tuple[str, str]]]] = [
        scripted_functions, scripted_modules, traced, fused]
    graphs = {name: normalize_paths(text) for source in sources for name, text in source()}
    graphs["every_attribute_kind"] = every_attribute_kind()
    graphs["nested_subgraphs"] = nested_subgraphs()
    return graphs


def main() -> None:
    os.makedirs(GRAPHS_DIR, exist_ok=True)
    for name, text in sorted(generate_all().items()):
        with open(os.path.join(GRAPHS_DIR, name + ".ir"), "w", encoding="utf-8") as f:
            f.write(text)
    print(f"wrote {len(os.listdir(GRAPHS_DIR))} graphs to {GRAPHS_DIR}")


if __name__ == "__main__":
    main()
