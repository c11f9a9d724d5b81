"""Triggers (issue 13), pure: the trigger definition (``spec``), its message filter
(``filters``) and the delivery contract with targets (``records``)."""
