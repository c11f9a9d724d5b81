"""HTTP's conditional writes (RFC 9110 §13.1) as a value: ``If-None-Match: *`` creates only,
``If-Match: *`` replaces only; without either a PUT creates or replaces. Magnetar issues no
entity tags, so ``*`` is the only value understood."""

from __future__ import annotations

from enum import Enum

from magnetar_core.domain.errors import InvalidMessage, PreconditionFailed


class Precondition(Enum):
    """What must hold of the resource before a write changes it."""

    ANY = "any"
    ABSENT = "absent"
    PRESENT = "present"

    @classmethod
    def of_headers(cls, if_none_match: str | None, if_match: str | None) -> Precondition:
        """From the request's headers; InvalidMessage for both, or for a value but ``*``."""
        if if_none_match is not None and if_match is not None:
            raise InvalidMessage("Send If-None-Match or If-Match, not both")
        for header, value in (("If-None-Match", if_none_match), ("If-Match", if_match)):
            if value is not None and value.strip() != "*":
                raise InvalidMessage(f"{header} takes only '*' (no entity tags are issued)")
        if if_none_match is not None:
            return cls.ABSENT
        return cls.PRESENT if if_match is not None else cls.ANY

    def check(self, exists: bool, what: str) -> None:
        """PreconditionFailed when ``what`` exists and must not, or is missing and must be
        there; nothing has been written."""
        if self is Precondition.ABSENT and exists:
            raise PreconditionFailed(f"{what} already exists (If-None-Match: *)")
        if self is Precondition.PRESENT and not exists:
            raise PreconditionFailed(f"{what} does not exist (If-Match: *)")
