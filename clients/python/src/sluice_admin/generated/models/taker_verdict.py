from enum import StrEnum

class TakerVerdict(StrEnum):
    DECLINED = "declined"
    FAILED = "failed"
    OVER_COST = "over_cost"
    TAKEN = "taken"
    TYPE = "type"
    UNUSABLE = "unusable"

    def __str__(self) -> str:
        return str(self.value)
