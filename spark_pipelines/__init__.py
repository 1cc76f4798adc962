"""Spark pipeline templates and the ``sluice`` PySpark data source. Not built yet."""
