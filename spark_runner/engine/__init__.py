"""The Spark engine of headroom: a scenario run on PySpark Structured Streaming with the
pure QoS core (per-class load managers, DILoS) in the loop.

Data flow of one micro-batch (one control period)::

    source (Python data source, per class and stream: a *point*)
      latestOffset: arrived tuples wait in the log; the class scheduler's budget
      (admission.py) decides how many leave it, the class's shed fraction how many of
      those are dropped; counts and the decision are written into the end offset
      (offsets.py), so the offset log records what applied to every batch
    → Spark (dataflow.py): the scenario's operators as Spark operators in the executors
      (network.py, expressions.py): filter, project, SQL map with a calibrated CPU burn
      (a Java UDF on the thread's CPU clock, jvm_burn.py), window aggregates and window
      joins with their state in the state store; an ``observe`` on every edge counts
      tuples and measures the arrival instants of each class's answers; the sink
      (sink.py) writes the outputs
    → controller (controller.py), when the batch's progress is reported: counts and
      answers (measures.py), response time = commit instant − arrival instant, load
      model, cost model (costs.py), one core manager per class through DILoS (or one
      common manager), live configuration, metrics; writes the next decision (quotas,
      shed fractions, budget) for the source.

Modules that import pyspark: ``source``, ``dataflow``, ``sink``, ``calibration``,
``runner``; the rest are Spark-free and unit tested without a JVM.
"""
