"""SensorDigest on a laptop: DynamoDB Local, SQS and stream emulation, and the command line."""
