"""Acknowledgements as Pulsar's client does them: grouped acks and nacks, their outbox and sender, the ack timeout, redelivery settings, and what keeps acknowledged messages from coming back."""
