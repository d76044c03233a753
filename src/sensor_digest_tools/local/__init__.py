"""SensorDigest on a laptop: the whole pipeline against DynamoDB Local, the demo that checks it, its traffic."""
