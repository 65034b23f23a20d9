from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="CreateOutBody")



@_attrs_define
class CreateOutBody:
    """ 
        Attributes:
            checked (int):
            compatible (bool):
            created_at (datetime.datetime):
            dataschema (str):
            event_type (str):
            id (int):
            new (bool): false: the spec equals the newest version and nothing was stored (running a create twice is safe).
            resource_type (str):
            schema (Any): The JSON Schema (2020-12) of this version.
            source_kind (str):
            status (str):
            tenant_id (str):
            topic (str):
            version (int):
            version_id (int):
            event_time_at (str | Unset):
            event_time_format (str | Unset):
            object_id_at (str | Unset):
     """

    checked: int
    compatible: bool
    created_at: datetime.datetime
    dataschema: str
    event_type: str
    id: int
    new: bool
    resource_type: str
    schema: Any
    source_kind: str
    status: str
    tenant_id: str
    topic: str
    version: int
    version_id: int
    event_time_at: str | Unset = UNSET
    event_time_format: str | Unset = UNSET
    object_id_at: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        checked = self.checked

        compatible = self.compatible

        created_at = self.created_at.isoformat()

        dataschema = self.dataschema

        event_type = self.event_type

        id = self.id

        new = self.new

        resource_type = self.resource_type

        schema = self.schema

        source_kind = self.source_kind

        status = self.status

        tenant_id = self.tenant_id

        topic = self.topic

        version = self.version

        version_id = self.version_id

        event_time_at = self.event_time_at

        event_time_format = self.event_time_format

        object_id_at = self.object_id_at


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "checked": checked,
            "compatible": compatible,
            "created_at": created_at,
            "dataschema": dataschema,
            "event_type": event_type,
            "id": id,
            "new": new,
            "resource_type": resource_type,
            "schema": schema,
            "source_kind": source_kind,
            "status": status,
            "tenant_id": tenant_id,
            "topic": topic,
            "version": version,
            "version_id": version_id,
        })
        if event_time_at is not UNSET:
            field_dict["event_time_at"] = event_time_at
        if event_time_format is not UNSET:
            field_dict["event_time_format"] = event_time_format
        if object_id_at is not UNSET:
            field_dict["object_id_at"] = object_id_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        checked = d.pop("checked")

        compatible = d.pop("compatible")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        dataschema = d.pop("dataschema")

        event_type = d.pop("event_type")

        id = d.pop("id")

        new = d.pop("new")

        resource_type = d.pop("resource_type")

        schema = d.pop("schema")

        source_kind = d.pop("source_kind")

        status = d.pop("status")

        tenant_id = d.pop("tenant_id")

        topic = d.pop("topic")

        version = d.pop("version")

        version_id = d.pop("version_id")

        event_time_at = d.pop("event_time_at", UNSET)

        event_time_format = d.pop("event_time_format", UNSET)

        object_id_at = d.pop("object_id_at", UNSET)

        create_out_body = cls(
            checked=checked,
            compatible=compatible,
            created_at=created_at,
            dataschema=dataschema,
            event_type=event_type,
            id=id,
            new=new,
            resource_type=resource_type,
            schema=schema,
            source_kind=source_kind,
            status=status,
            tenant_id=tenant_id,
            topic=topic,
            version=version,
            version_id=version_id,
            event_time_at=event_time_at,
            event_time_format=event_time_format,
            object_id_at=object_id_at,
        )

        return create_out_body

