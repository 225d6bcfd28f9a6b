"""Triton kernels of the labs, one module per lab (run through Triton's interpreter on a CPU)."""
