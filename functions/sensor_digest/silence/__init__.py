"""Silence: registered sensors that stopped reporting. ``rules.py`` (when a sensor is silent, pure),
``check.py`` (the reads that find them), ``service.py`` (the scheduled check as a Lambda service)."""
