from enum import StrEnum

class PortalLinkCreatedScope(StrEnum):
    DESTINATIONS = "destinations"
    TENANT = "tenant"

    def __str__(self) -> str:
        return str(self.value)
