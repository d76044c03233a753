"""The history import (docs/import.md): a fleet's past reports from files and S3 objects, counted as live
reports are, each row once: its rows read by the message rules (``rows.py``, ``reading.py``), dated in
the zone of their sensor's first import (``pins.py``), given their identity and counted (``chunks.py``
over ``counting/history.py``), the deployed import's steps (``service.py``: a batch of the Distributed
Map; ``steps.py``: prepare and finish), and what an object is and what its import did (``source.py``,
``record.py``)."""
