from enum import StrEnum

class EndpointCreatedDisabledReason(StrEnum):
    FAILING = "failing"
    GONE = "gone"
    OPERATOR = "operator"

    def __str__(self) -> str:
        return str(self.value)
