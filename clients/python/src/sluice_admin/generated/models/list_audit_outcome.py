from enum import StrEnum

class ListAuditOutcome(StrEnum):
    CONFLICT = "conflict"
    ERROR = "error"
    FORBIDDEN = "forbidden"
    INVALID = "invalid"
    NOT_FOUND = "not_found"
    OK = "ok"

    def __str__(self) -> str:
        return str(self.value)
