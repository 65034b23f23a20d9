from enum import StrEnum

class EndpointDetailDisabledReason(StrEnum):
    FAILING = "failing"
    GONE = "gone"
    OPERATOR = "operator"

    def __str__(self) -> str:
        return str(self.value)
