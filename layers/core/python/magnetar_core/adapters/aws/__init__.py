"""Storage adapters: DynamoDB (topics, log index, cursors) and S3 (entry objects).

AWS errors become domain errors here (``raise ... from exc``), by error code, never by text.
"""
