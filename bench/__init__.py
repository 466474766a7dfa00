"""Benchmarks of tsjit against eager PyTorch and torch.jit, run by `make bench` (`python -m bench`)."""
