from enum import StrEnum

class RewindBodyTo(StrEnum):
    EARLIEST = "earliest"
    LATEST = "latest"

    def __str__(self) -> str:
        return str(self.value)
