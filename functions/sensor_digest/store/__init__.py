"""The data-access floor: the tables' layout (``schema``), the DynamoDB boundary (``dynamo``), the
conditional writes several paths share (``expressions``), and every read of the tables (``reads``)."""
