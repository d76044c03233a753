"""SensorDigest on a laptop: the whole pipeline against DynamoDB Local, and the demo that checks it."""
