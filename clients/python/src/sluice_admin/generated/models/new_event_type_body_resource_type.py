from enum import StrEnum

class NewEventTypeBodyResourceType(StrEnum):
    ACCOUNT = "account"
    CUSTOMER = "customer"
    DOCUMENT = "document"
    EVENT = "event"
    MESSAGE = "message"
    ORDER = "order"
    PAYMENT = "payment"
    PRODUCT = "product"
    SHIPMENT = "shipment"
    SUBSCRIPTION = "subscription"
    TICKET = "ticket"
    USER = "user"

    def __str__(self) -> str:
        return str(self.value)
