"""End-to-end encryption: ``CryptoKeyReader`` and the encrypt / decrypt functions (``key_reader``), and the cipher work (``cipher``)."""
