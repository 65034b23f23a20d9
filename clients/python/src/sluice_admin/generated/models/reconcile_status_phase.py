from enum import StrEnum

class ReconcileStatusPhase(StrEnum):
    EVENTS = "events"
    FETCH = "fetch"
    REDELIVER = "redeliver"

    def __str__(self) -> str:
        return str(self.value)
