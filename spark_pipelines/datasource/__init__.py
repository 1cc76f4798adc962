"""The ``sluice`` PySpark Python data source (batch + streaming, read + write)."""
