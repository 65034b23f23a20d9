from enum import StrEnum

class PayloadState(StrEnum):
    ERASED = "erased"
    EXPIRED = "expired"
    KEPT = "kept"

    def __str__(self) -> str:
        return str(self.value)
