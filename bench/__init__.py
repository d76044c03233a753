"""SensorDigest benchmarks: figures printed, never asserted on speed (see docs/benchmarks.md)."""
