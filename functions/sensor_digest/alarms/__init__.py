"""Alarms on readings: rules (``rules.py``), the state model (``model.py``), where they are stored
(``store.py``), ingest's evaluation after the count (``evaluator.py``), and the announcer that turns
each transition into an EventBridge event (``announce.py``)."""
