from enum import StrEnum

class ConflictDecisionOutcome(StrEnum):
    DISMISSED = "dismissed"
    RESOLVED = "resolved"

    def __str__(self) -> str:
        return str(self.value)
