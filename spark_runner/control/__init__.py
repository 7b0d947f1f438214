"""The per-period control loop both engines run (no Spark, no clock).

- :mod:`plane`: the control plane a scenario's ``control.mode`` asks for (none / common /
  per-class / DILoS), built from the core's managers and DILoS controller.
- :mod:`period`: one control period — what an engine measured per class in, the load
  model's update, the observations, the control plane's step and the oracle's account
  out — the same for the simulator and the Spark runner.
- :mod:`live`: a new live configuration applied to a running control plane.
- the run vocabulary both engines share: :mod:`network` (a scenario's operator network
  and the core's graph of it), :mod:`background` (the background jobs' processor share),
  :mod:`run` (per-class totals and a run's output), :mod:`results` (the results
  document) and :mod:`report` (its text tables).
"""
