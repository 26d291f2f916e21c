"""Framework-independent parts of the runrun package: runtime lifetime, queries, process sets,
reduction ops and the exception hierarchy. No module here imports a framework."""
