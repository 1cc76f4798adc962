"""The Connect runtime: workers, tasks, stores and the herder (see docs/runtime.md).

``herder.Herder`` is the entry point (the REST API's only collaborator); ``worker.Worker`` runs
connector instances and ``worker_source_task``/``worker_sink_task`` threads; ``storage`` holds
configs, offsets and statuses in compacted topics; ``error_handling`` applies ``errors.*``.
"""
