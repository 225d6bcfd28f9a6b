# torch.compile in these tests imports TorchInductor; helpers.compilers does so with torch's
# own DeprecationWarning (torch.jit.script_method, torch 2.13) silenced, once.
import helpers.compilers  # noqa: F401
