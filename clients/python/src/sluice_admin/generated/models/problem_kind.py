from enum import StrEnum

class ProblemKind(StrEnum):
    CONFLICT = "conflict"
    FORBIDDEN = "forbidden"
    INVALID = "invalid"
    LIMITED = "limited"
    NOT_FOUND = "not_found"
    UNAUTHENTICATED = "unauthenticated"
    UNAVAILABLE = "unavailable"

    def __str__(self) -> str:
        return str(self.value)
