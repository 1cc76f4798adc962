"""The ``sluice`` PySpark Python data source (batch + streaming, read + write).

It needs the ``spark`` extra; importing it without pyspark/numpy raises a MissingExtraError
(an ImportError) that says ``pip install 'sluice[spark]'``. Without numba it still reads, with
the Python decoder instead of the compiled one.
"""

from spark_pipelines.extra import require_spark

require_spark("the sluice Spark data source")
