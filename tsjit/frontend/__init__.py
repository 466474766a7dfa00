"""The TorchScript frontend: source text and Python functions in, graphs out.

The tokens and source ranges it reads come from tsjit.source, the layer below tsjit.ir. This package imports
nothing at package level, so importing one frontend module does not pull in the rest.
"""
