from enum import StrEnum

class NewEventTypeBodyEventTimeFormat(StrEnum):
    RFC3339 = "rfc3339"
    UNIX = "unix"
    UNIX_OR_RFC3339 = "unix_or_rfc3339"

    def __str__(self) -> str:
        return str(self.value)
