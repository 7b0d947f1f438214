"""``python -m spark_runner.job --config PATH``; see ``spark_runner.job.main``."""

from spark_runner.job.main import main

raise SystemExit(main())
