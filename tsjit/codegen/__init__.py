"""Kernel generation for prim::FusionGroup (DESIGN.md "Layout"; seed: jit-overview.md "Post-derivative
optimization": the FusionGroup's Operation compiles a kernel for its subgraph).

`elementwise.py` says which operators a kernel can compute and how, in C; `c_kernel.py` writes the C source
of one FusionGroup subgraph; `compiler.py` compiles it with the system C compiler into a shared library cached
on disk and loads it with ctypes. The runtime side (guards, fallback) is tsjit.runtime.fusion.
"""
