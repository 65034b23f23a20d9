from enum import StrEnum

class SearchEventsStatus(StrEnum):
    PUBLISHED = "published"
    QUARANTINED = "quarantined"
    UNHANDLED = "unhandled"
    WAITING = "waiting"

    def __str__(self) -> str:
        return str(self.value)
