"""Operating a pipeline wherever it runs (local or a deployed stack): targets, dead letters, rebuild, producers."""
