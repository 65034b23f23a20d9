from enum import StrEnum

class EventStatus(StrEnum):
    PUBLISHED = "published"
    QUARANTINED = "quarantined"
    UNHANDLED = "unhandled"
    WAITING = "waiting"

    def __str__(self) -> str:
        return str(self.value)
