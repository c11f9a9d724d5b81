"""``Client``'s work behind its public methods: its options, ``create_producer`` and ``subscribe``."""
