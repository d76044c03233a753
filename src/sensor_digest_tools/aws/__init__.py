"""Stand-ins for AWS services on this machine: DynamoDB Local, an SQS broker and server, the stream
reader, and the session whose clients reach them."""
