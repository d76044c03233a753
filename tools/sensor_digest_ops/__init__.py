"""Operating a pipeline wherever it runs (local or a deployed stack): targets, table reads, dead letters."""
