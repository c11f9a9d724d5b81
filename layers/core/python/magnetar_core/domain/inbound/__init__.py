"""Inbound event sources (issue 13), pure: AWS source events read (``events``) and routed to a
topic with a key and properties (``routes``)."""
