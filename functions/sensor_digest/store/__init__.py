"""The data-access floor: the tables' layout (``schema``), the DynamoDB boundary (``dynamo``)."""
