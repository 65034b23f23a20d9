from enum import StrEnum

class ReconcileRunPhase(StrEnum):
    EVENTS = "events"
    FETCH = "fetch"
    REDELIVER = "redeliver"
    VALUE_0 = ""

    def __str__(self) -> str:
        return str(self.value)
