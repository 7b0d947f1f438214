"""The Spark engine of headroom: a scenario run on PySpark Structured Streaming with the
pure QoS core (per-class load managers, DILoS) in the loop.

Rooms:

- :mod:`.sources`: the log the sources read (generated streams, Redis, files) and the
  headroom source, a Python streaming data source with admission and shedding;
- :mod:`.dataflow`: the scenario's operator network as Spark operators, its SQL, the CPU
  burn of calibrated operators, the sinks, one query per priority tier;
- :mod:`.measure`: what a batch measured (counts, answers, executor time per query
  branch), response-time digests, the cost model and the burn's calibration;
- :mod:`.control`: the controller on the driver, the class scheduler's admission, the
  pace of the batches, the executors and the background hog;
- here: :mod:`.runner` (one run: the query and the control step after each batch),
  :mod:`.tiered` (a job's queries driven as one run), :mod:`.results`, :mod:`.cluster`.

Data flow of one micro-batch (one control period)::

    source (sources/source.py, per class and stream: a *point*)
      latestOffset: arrived tuples wait in the log; the class scheduler's budget
      (control/admission.py) decides how many leave it, the class's shed fraction how
      many of those are dropped; counts and the decision are written into the end offset
      (sources/offsets.py), so the offset log records what applied to every batch
    → Spark (dataflow/operators.py): the scenario's operators as Spark operators in the
      executors (dataflow/network.py, dataflow/expressions.py): filter, project, SQL map
      with a calibrated CPU burn (a Java UDF on the thread's CPU clock,
      dataflow/jvm_burn.py), window aggregates and window joins with their state in the
      state store; an ``observe`` on every edge counts tuples and measures the arrival
      instants of each class's answers; the sink (dataflow/sink.py) writes the outputs
    → controller (control/controller.py), when the batch's progress is reported: counts
      and answers (measure/measures.py), response time = commit instant − arrival
      instant, load model, cost model (measure/costs.py), one core manager per class
      through DILoS (or one common manager), live configuration, metrics; writes the
      next decision (quotas, shed fractions, budget) for the source.

Modules that import pyspark: ``sources.source``, ``dataflow.operators``,
``dataflow.sink``, ``measure.calibration``, ``runner``; the rest are Spark-free and unit
tested without a JVM.
"""
