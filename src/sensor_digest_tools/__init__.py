"""Everything of SensorDigest that runs outside Lambda.

``aws/`` (stand-ins for AWS services), ``lambda_runtime/`` (Lambda's event shapes, pollers and the
invoke adapter), ``instruments/`` (metering, latency, conflicts, faults), ``local/`` (the
pipeline on a laptop, the demo, traffic), ``ops/`` (dead letters, rebuild, producers, targets) and
``cli/`` (the ``sensor-digest`` command).
"""
