"""The ``sensor-digest`` command line."""
