from enum import StrEnum

class PortalLinkScope(StrEnum):
    DESTINATIONS = "destinations"
    TENANT = "tenant"

    def __str__(self) -> str:
        return str(self.value)
