"""The SensorDigest CDK app: one construct per capability, composed by ``stack.py``."""
