from enum import StrEnum

class TokenPortalScope(StrEnum):
    DESTINATIONS = "destinations"
    TENANT = "tenant"

    def __str__(self) -> str:
        return str(self.value)
