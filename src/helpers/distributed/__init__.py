"""Running several processes as one job: the launcher the distributed pages and labs share.

:func:`spawn` starts ``world_size`` processes on this machine, joins them into one
``torch.distributed`` process group (gloo on CPUs, NCCL with one GPU per rank), runs a function
in each and returns what every rank returned. Taught in {ref}`sec-collectives`.

Library only: no page imports it.
"""

from .launch import WorkerError, WorkerTimeout, free_port, loopback_store, spawn

__all__ = ["spawn", "free_port", "loopback_store", "WorkerError", "WorkerTimeout"]
