"""What the tests share that is not a pytest fixture (the fixtures live in the conftest.py files).

- ``faults``: the fault layer around the DynamoDB client, and the random fault plan;
- ``hostile``: hostile message bodies and the zone kinds (hypothesis strategies);
- ``fifo``: FIFO messages with sequence numbers as SQS gives them;
- ``messages``: message bodies, and Lambda's events and context;
- ``tables``: the tables a test gets, and reading them back;
- ``sqs``: moto's SQS beside DynamoDB Local, the dead-letter queue, receiving from the broker;
- ``moto_tier``: the quick tier's moto account;
- ``scenarios``: the ingest issue's scenario (many messages, delivered one to three times);
- ``delivery``: SQS + Lambda as a redelivery loop that survives crashes;
- ``life``: a report's life through the dead-letter queue and back (the broker on a moved clock, the redrives);
- ``model``: the model the state machines compare the tables with;
- ``workers``: code run in child processes (importable under the spawn method);
- ``templates``: the synthesized stack and reading its template;
- ``read_api``: requests to the read API's service, and the items they read;
- ``browser``: the read API's page in headless Chromium, its DOM read back;
- ``ports``: whether an address's port answers (what listens on loopback alone).

Test modules import shared code from here only, never from another test module or a conftest.
"""
