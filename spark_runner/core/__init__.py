"""The pure QoS core: load estimation, load managers, the DILoS class scheduler, thresholds.

Nothing here imports Spark, a web framework or a database, reads a clock, or keeps
global state. Times are float seconds handed in by the caller.
"""
