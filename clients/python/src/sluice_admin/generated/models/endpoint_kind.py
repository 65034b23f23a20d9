from enum import StrEnum

class EndpointKind(StrEnum):
    HTTP = "http"
    KAFKA = "kafka"
    RABBITMQ = "rabbitmq"

    def __str__(self) -> str:
        return str(self.value)
