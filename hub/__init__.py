"""The Connect-style hub: the plugin contract (``api``), built-in plugins (``plugins``,
``converters``, ``transforms``), the runtime, managed pipelines and the REST API."""
