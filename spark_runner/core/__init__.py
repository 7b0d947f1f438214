"""The pure QoS core: load estimation, load managers, the DILoS class scheduler, thresholds.

Nothing here imports Spark, a web framework or a database, reads a clock, or keeps
global state. Times are float seconds handed in by the caller.

Modules: :mod:`observation` (what a manager sees and answers), :mod:`operator_graph`,
:mod:`sharing` and :mod:`load_model` (Eq. 3.1/3.2/4.1), :mod:`managers` (ALoMa, SEaMLeSS,
CTRL, Aurora, None, Linear behind one interface), :mod:`class_scheduler`,
:mod:`redistribution` and :mod:`dilos` (per-class managers + capacity redistribution),
:mod:`thresholds`, :mod:`params` and :mod:`errors`.
"""
