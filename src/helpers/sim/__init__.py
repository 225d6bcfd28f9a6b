"""Small, seeded simulators used as oracles for the models and as demonstrations on pages.

* :mod:`helpers.sim.queue`: a discrete-event simulation of a first-come-first-served
  single-server queue (Poisson arrivals and exponential service by default: the M/M/1 queue).
* :mod:`helpers.sim.pipeline`: the schedule of a pipeline-parallel training step (GPipe, 1F1B,
  interleaved 1F1B), each operation started as early as its rank and its inputs allow.
* :mod:`helpers.sim.failures`: a Monte Carlo of a checkpointed job under Poisson failures
  (failures also during checkpoints and restarts), the oracle of Daly's wall-time formula.

Used by many pages, among them: chapters/fault-tolerance.md, chapters/inference-metrics.md,
chapters/parallelism.md, chapters/performance-models.md, chapters/production-inference.md,
chapters/quantization-and-speculation.md.
"""
