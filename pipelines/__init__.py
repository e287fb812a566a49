"""Apache Beam pipelines for the heavy per-segment stages.

Each module exposes `build(p, input_pattern, output_prefix, cfg)`, which composes
transforms with Beam I/O on a given pipeline, and `run(argv, test_pipeline=None)`, which
parses options and runs it. The runner and its options come from configuration
(`pipelines.options`), so the same code moves to Flink, Spark or Dataflow.
"""
