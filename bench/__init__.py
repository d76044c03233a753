"""SensorDigest benchmarks: figures printed, never asserted on speed (see README, Benchmarks)."""
