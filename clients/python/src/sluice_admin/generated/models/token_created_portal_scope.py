from enum import StrEnum

class TokenCreatedPortalScope(StrEnum):
    DESTINATIONS = "destinations"
    TENANT = "tenant"

    def __str__(self) -> str:
        return str(self.value)
