"""The Spark engine of headroom: a scenario run on PySpark Structured Streaming with the
pure QoS core (per-class load managers, DILoS) in the loop.

Data flow of one micro-batch (one control period)::

    source (Python data source, per class and stream: a *point*)
      latestOffset: arrived tuples wait in the log; the class scheduler's budget
      (admission.py) decides how many leave it, the class's shed fraction how many of
      those are dropped; counts and the decision are written into the end offset
      (offsets.py), so the offset log records what applied to every batch
    → Spark (pipeline.py): the scenario's stateless operators, compiled once
      (network.py, expressions.py) into a few row-wise layers over one scan: routing
      to every query that reads a point, filter, project, SQL map with a calibrated CPU
      burn (a Java UDF on the thread's CPU clock, jvm_burn.py); tuples dropped by a
      filter or shed on a shared segment's edge are
      kept as marker rows so every operator's in/out count is exact; one collect per batch
    → driver (stateful.py, finish.py): window aggregates and window joins merged
      into window state, per-operator counts, output rows to the sink (sink.py),
      response time of every output tuple = output instant − arrival instant
    → controller (controller.py): load model, cost model (costs.py), one core manager
      per class through DILoS (or one common manager), live configuration, metrics;
      writes the next decision (quotas, shed fractions, budget) for the source.

Modules that import pyspark: ``source``, ``pipeline``, ``runner``; the rest are Spark-free
and unit tested without a JVM.
"""
