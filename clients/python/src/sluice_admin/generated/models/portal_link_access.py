from enum import StrEnum

class PortalLinkAccess(StrEnum):
    MANAGE = "manage"
    READ = "read"

    def __str__(self) -> str:
        return str(self.value)
