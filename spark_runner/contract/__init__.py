"""The messages between the control plane and a job, and nothing else (no Spark import).

- :mod:`.snapshot`: the frozen configuration a job receives at launch (a JSON file);
- :mod:`.control`: the live configuration an operator may change while the job runs;
- :mod:`.samples`: the per-class metric samples a job pushes every control period.

The backend builds and checks them; the job (``spark_runner.job``, ``spark_runner.engine``)
reads and sends them.
"""
