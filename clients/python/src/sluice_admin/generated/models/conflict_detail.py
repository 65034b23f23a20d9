from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.conflict_outcome import ConflictOutcome
  from ..models.payload import Payload





T = TypeVar("T", bound="ConflictDetail")



@_attrs_define
class ConflictDetail:
    """ 
        Attributes:
            body_sha256 (str):
            event_id (str):
            event_type (str):
            id (str):
            inbox_id (int):
            newcomer (Payload):
            original (Payload):
            original_received_at (datetime.datetime):
            received_at (datetime.datetime):
            source_id (str):
            tenant_id (str):
            outcome (ConflictOutcome | Unset):
     """

    body_sha256: str
    event_id: str
    event_type: str
    id: str
    inbox_id: int
    newcomer: Payload
    original: Payload
    original_received_at: datetime.datetime
    received_at: datetime.datetime
    source_id: str
    tenant_id: str
    outcome: ConflictOutcome | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.conflict_outcome import ConflictOutcome # noqa: PLC0415
        from ..models.payload import Payload # noqa: PLC0415
        body_sha256 = self.body_sha256

        event_id = self.event_id

        event_type = self.event_type

        id = self.id

        inbox_id = self.inbox_id

        newcomer = self.newcomer.to_dict()

        original = self.original.to_dict()

        original_received_at = self.original_received_at.isoformat()

        received_at = self.received_at.isoformat()

        source_id = self.source_id

        tenant_id = self.tenant_id

        outcome: dict[str, Any] | Unset = UNSET
        if not isinstance(self.outcome, Unset):
            outcome = self.outcome.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "body_sha256": body_sha256,
            "event_id": event_id,
            "event_type": event_type,
            "id": id,
            "inbox_id": inbox_id,
            "newcomer": newcomer,
            "original": original,
            "original_received_at": original_received_at,
            "received_at": received_at,
            "source_id": source_id,
            "tenant_id": tenant_id,
        })
        if outcome is not UNSET:
            field_dict["outcome"] = outcome

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.conflict_outcome import ConflictOutcome # noqa: PLC0415
        from ..models.payload import Payload # noqa: PLC0415
        d = dict(src_dict)
        body_sha256 = d.pop("body_sha256")

        event_id = d.pop("event_id")

        event_type = d.pop("event_type")

        id = d.pop("id")

        inbox_id = d.pop("inbox_id")

        newcomer = Payload.from_dict(d.pop("newcomer"))




        original = Payload.from_dict(d.pop("original"))




        original_received_at = datetime.datetime.fromisoformat(d.pop("original_received_at"))




        received_at = datetime.datetime.fromisoformat(d.pop("received_at"))




        source_id = d.pop("source_id")

        tenant_id = d.pop("tenant_id")

        _outcome = d.pop("outcome", UNSET)
        outcome: ConflictOutcome | Unset
        if isinstance(_outcome,  Unset):
            outcome = UNSET
        else:
            outcome = ConflictOutcome.from_dict(_outcome)




        conflict_detail = cls(
            body_sha256=body_sha256,
            event_id=event_id,
            event_type=event_type,
            id=id,
            inbox_id=inbox_id,
            newcomer=newcomer,
            original=original,
            original_received_at=original_received_at,
            received_at=received_at,
            source_id=source_id,
            tenant_id=tenant_id,
            outcome=outcome,
        )

        return conflict_detail

