from enum import StrEnum

class SourceKind(StrEnum):
    API = "api"
    GITHUB = "github"
    HMAC = "hmac"
    STANDARD_WEBHOOKS = "standard_webhooks"
    STRIPE = "stripe"

    def __str__(self) -> str:
        return str(self.value)
