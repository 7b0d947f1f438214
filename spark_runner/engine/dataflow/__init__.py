"""The scenario's operator network as Spark runs it: operators, SQL, CPU burn, sinks,
queries per priority tier."""
