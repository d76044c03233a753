"""Emulations of AWS for the local runtime and the tests: DynamoDB Local, SQS, event sources, Lambda events."""
