"""What a batch measured in Spark, and the statistics and cost model built from it."""
