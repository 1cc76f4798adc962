"""A streaming copy job run as its own process, so a test can SIGKILL the whole driver.

``python -m tests.spark_pipelines._stream_job BOOTSTRAP IN OUT CHECKPOINT MODE`` where MODE is
``continuous`` (runs until killed, small micro-batches) or ``once`` (availableNow, then exits).
"""

from __future__ import annotations

import sys

from spark_pipelines.runner import build_session


def main() -> None:
    bootstrap, source, sink, checkpoint, mode = sys.argv[1:6]
    spark = build_session(
        "local[2]", app_name="kill-test", extra={"spark.sql.shuffle.partitions": "2"}
    )
    df = (
        spark.readStream.format("sluice")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "150")
        .load()
        .selectExpr("key", "upper(cast(value as string)) as value")
    )
    writer = (
        df.writeStream.format("sluice")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", checkpoint)
    )
    if mode == "once":
        writer.trigger(availableNow=True).start().awaitTermination()
    else:
        writer.trigger(processingTime="0 seconds").start().awaitTermination()


if __name__ == "__main__":
    main()
