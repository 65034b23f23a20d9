from enum import StrEnum

class EndpointCreatedKind(StrEnum):
    HTTP = "http"
    KAFKA = "kafka"
    RABBITMQ = "rabbitmq"
    SQS = "sqs"

    def __str__(self) -> str:
        return str(self.value)
