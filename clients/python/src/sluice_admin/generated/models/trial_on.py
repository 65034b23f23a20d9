from enum import StrEnum

class TrialOn(StrEnum):
    EVENT = "event"
    NONE = "none"
    SAMPLE = "sample"

    def __str__(self) -> str:
        return str(self.value)
