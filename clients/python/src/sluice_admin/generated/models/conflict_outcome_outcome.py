from enum import StrEnum

class ConflictOutcomeOutcome(StrEnum):
    DISMISSED = "dismissed"
    RESOLVED = "resolved"

    def __str__(self) -> str:
        return str(self.value)
