from enum import StrEnum

class DeadSelectionBodyErrorClass(StrEnum):
    CANCELED = "canceled"
    CONNECT = "connect"
    DNS = "dns"
    OTHER = "other"
    REFUSED_ADDRESS = "refused_address"
    REQUEST = "request"
    RESET = "reset"
    STATUS = "status"
    TIMEOUT = "timeout"
    TLS = "tls"
    TRANSFORMATION = "transformation"

    def __str__(self) -> str:
        return str(self.value)
