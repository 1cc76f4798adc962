"""Built-in converters: JSON (with or without the schema envelope), string, bytes, headers."""
