from enum import StrEnum

class PortalLinkRequestScope(StrEnum):
    DESTINATIONS = "destinations"
    TENANT = "tenant"

    def __str__(self) -> str:
        return str(self.value)
