from enum import StrEnum

class EndpointTestFrom(StrEnum):
    LAST_EVENT = "last_event"
    SCHEMA = "schema"
    SYNTHETIC = "synthetic"

    def __str__(self) -> str:
        return str(self.value)
