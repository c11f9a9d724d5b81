"""Acknowledgements as Pulsar's client does them: grouped acks and nacks, their outbox and
sender, the ack timeout, redelivery settings, and what keeps acknowledged messages from coming
back, driven by ``tracker.AckTracker`` (the upper-case constants below are ``tracker``'s):

- acks are grouped: one ``POST .../ack`` per sub-consumer per group, sent every ``ACK_GROUP_TIME``
  seconds, when ``ACK_GROUP_MAX`` acks and nacks are pending, and on flush / close;
- negative acks are grouped the same way and sent at once (``POST .../nack``) with the
  redelivery delay (``delayMs``) or the backoff object: the SERVICE holds the messages for
  the delay (a timer per due bucket) and applies the backoff by each message's redelivery
  count, so nothing waits in the client and a closed or crashed client loses no delay —
  except the nack of one message of a batch while this consumer still holds other messages
  of that batch: it waits until those are settled, at most ``max(delay,
  NACK_HOLD_MIN_SECONDS)``, and then carries the rest of its delay (``magnetar._consumer.acks.held``);
- with an ack timeout, deliveries not acknowledged in time are sent back (``POST .../nack``
  without delay, or with the ack-timeout backoff), checked once per tick as Pulsar's
  ``UnAckedMessageTracker`` does: a message handed to the application at ``t`` goes back
  at the first tick instant at or after ``t + timeout`` (so within ``timeout + tick``).
  The service counts each such redelivery (``redelivery_count`` + 1).

A nack of a received ``Message`` carries the redelivery count it was delivered with
(``redeliveryCounts``): the service ignores it once the message was redelivered. Nothing is
dropped silently: requests go out in order per sub-consumer (``Outbox``, sent by
``AckSender``), retried after a jittered backoff of at most ``RETRY_MAX_SECONDS`` while the
consumer is open; a refused one, or one still failing at ``flush``'s deadline (on close;
also one in flight then that fails later), is logged as an ERROR naming the ids lost.
"""
