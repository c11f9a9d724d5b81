"""Schemas (issue 15): what a topic's schema registry stores (``data``), Avro's schema
resolution rules (``avro``) and Pulsar's compatibility strategies (``compatibility``). Pure:
no I/O."""
