"""A producer's internals: batches, entries built and committed, registration on each partition, routing, partition growth, and the sender thread."""
