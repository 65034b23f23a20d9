from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.new_event_type_body_event_time_format import NewEventTypeBodyEventTimeFormat
from ..models.new_event_type_body_resource_type import NewEventTypeBodyResourceType
from ..models.new_event_type_body_source_kind import NewEventTypeBodySourceKind
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.new_event_type_body_schema import NewEventTypeBodySchema





T = TypeVar("T", bound="NewEventTypeBody")



@_attrs_define
class NewEventTypeBody:
    """ 
        Attributes:
            event_type (str): The type's name, as the events carry it (e.g. order.placed): letters, digits, '.', '_' or '-',
                starting with a letter or digit.
            resource_type (NewEventTypeBodyResourceType): The resource type its events are keyed and routed by: one of the
                deployment's (SLUICE_TENANT_RESOURCE_TYPES).
            schema (NewEventTypeBodySchema): JSON Schema 2020-12 as an object, self-contained (no remote $ref); no string in
                it may hold NUL. A schema that does not compile is refused (422).
            source_kind (NewEventTypeBodySourceKind): A source kind of this build's (its provider registry), or api.
            compatible (bool | Unset): A new version must accept every stored event the previous one accepted (checked
                before it is stored).
            event_time_at (str | Unset): Where the event time is, like object_id_at.
            event_time_format (NewEventTypeBodyEventTimeFormat | Unset): How the event time is written; absent: unix.
            object_id_at (str | Unset): Where the object id is: a JSON pointer (/data/id) or header:<Name>; absent: the
                source kind's place.
     """

    event_type: str
    resource_type: NewEventTypeBodyResourceType
    schema: NewEventTypeBodySchema
    source_kind: NewEventTypeBodySourceKind
    compatible: bool | Unset = UNSET
    event_time_at: str | Unset = UNSET
    event_time_format: NewEventTypeBodyEventTimeFormat | Unset = UNSET
    object_id_at: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.new_event_type_body_schema import NewEventTypeBodySchema # noqa: PLC0415
        event_type = self.event_type

        resource_type = self.resource_type.value

        schema = self.schema.to_dict()

        source_kind = self.source_kind.value

        compatible = self.compatible

        event_time_at = self.event_time_at

        event_time_format: str | Unset = UNSET
        if not isinstance(self.event_time_format, Unset):
            event_time_format = self.event_time_format.value


        object_id_at = self.object_id_at


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "event_type": event_type,
            "resource_type": resource_type,
            "schema": schema,
            "source_kind": source_kind,
        })
        if compatible is not UNSET:
            field_dict["compatible"] = compatible
        if event_time_at is not UNSET:
            field_dict["event_time_at"] = event_time_at
        if event_time_format is not UNSET:
            field_dict["event_time_format"] = event_time_format
        if object_id_at is not UNSET:
            field_dict["object_id_at"] = object_id_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.new_event_type_body_schema import NewEventTypeBodySchema # noqa: PLC0415
        d = dict(src_dict)
        event_type = d.pop("event_type")

        resource_type = NewEventTypeBodyResourceType(d.pop("resource_type"))




        schema = NewEventTypeBodySchema.from_dict(d.pop("schema"))




        source_kind = NewEventTypeBodySourceKind(d.pop("source_kind"))




        compatible = d.pop("compatible", UNSET)

        event_time_at = d.pop("event_time_at", UNSET)

        _event_time_format = d.pop("event_time_format", UNSET)
        event_time_format: NewEventTypeBodyEventTimeFormat | Unset
        if isinstance(_event_time_format,  Unset):
            event_time_format = UNSET
        else:
            event_time_format = NewEventTypeBodyEventTimeFormat(_event_time_format)




        object_id_at = d.pop("object_id_at", UNSET)

        new_event_type_body = cls(
            event_type=event_type,
            resource_type=resource_type,
            schema=schema,
            source_kind=source_kind,
            compatible=compatible,
            event_time_at=event_time_at,
            event_time_format=event_time_format,
            object_id_at=object_id_at,
        )

        return new_event_type_body

