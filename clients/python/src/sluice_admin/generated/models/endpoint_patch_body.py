from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.endpoint_patch_body_headers import EndpointPatchBodyHeaders
  from ..models.endpoint_patch_body_transformation_sample import EndpointPatchBodyTransformationSample
  from ..models.target_credentials import TargetCredentials
  from ..models.target_settings import TargetSettings





T = TypeVar("T", bound="EndpointPatchBody")



@_attrs_define
class EndpointPatchBody:
    """ 
        Attributes:
            concurrency (int | Unset): A new concurrency; 0: back to the deployment's default.
            credentials (TargetCredentials | Unset):
            description (str | Unset): A new description; empty clears it.
            expression (str | Unset): Replace the filter expression (the rules of the create); empty removes it.
            filters (list[str] | Unset): Replace the filters.
            headers (EndpointPatchBodyHeaders | Unset): Replace every static header; {} clears them.
            ordered (bool | Unset):
            rate_per_second (int | Unset): A new rate; 0: back to the deployment's default.
            settings (TargetSettings | Unset):
            transformation (str | Unset): Replace the transformation (the rules of the create: checked, then tried); empty
                removes it. A change of it or of the expression is the rules' next version.
            transformation_sample (EndpointPatchBodyTransformationSample | Unset): An event body to try the new
                transformation on (as in the create).
            url (str | Unset): A new URL (the rules of the create).
     """

    concurrency: int | Unset = UNSET
    credentials: TargetCredentials | Unset = UNSET
    description: str | Unset = UNSET
    expression: str | Unset = UNSET
    filters: list[str] | Unset = UNSET
    headers: EndpointPatchBodyHeaders | Unset = UNSET
    ordered: bool | Unset = UNSET
    rate_per_second: int | Unset = UNSET
    settings: TargetSettings | Unset = UNSET
    transformation: str | Unset = UNSET
    transformation_sample: EndpointPatchBodyTransformationSample | Unset = UNSET
    url: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.endpoint_patch_body_headers import EndpointPatchBodyHeaders # noqa: PLC0415
        from ..models.endpoint_patch_body_transformation_sample import EndpointPatchBodyTransformationSample # noqa: PLC0415
        from ..models.target_credentials import TargetCredentials # noqa: PLC0415
        from ..models.target_settings import TargetSettings # noqa: PLC0415
        concurrency = self.concurrency

        credentials: dict[str, Any] | Unset = UNSET
        if not isinstance(self.credentials, Unset):
            credentials = self.credentials.to_dict()

        description = self.description

        expression = self.expression

        filters: list[str] | Unset = UNSET
        if not isinstance(self.filters, Unset):
            filters = self.filters



        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

        ordered = self.ordered

        rate_per_second = self.rate_per_second

        settings: dict[str, Any] | Unset = UNSET
        if not isinstance(self.settings, Unset):
            settings = self.settings.to_dict()

        transformation = self.transformation

        transformation_sample: dict[str, Any] | Unset = UNSET
        if not isinstance(self.transformation_sample, Unset):
            transformation_sample = self.transformation_sample.to_dict()

        url = self.url


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if concurrency is not UNSET:
            field_dict["concurrency"] = concurrency
        if credentials is not UNSET:
            field_dict["credentials"] = credentials
        if description is not UNSET:
            field_dict["description"] = description
        if expression is not UNSET:
            field_dict["expression"] = expression
        if filters is not UNSET:
            field_dict["filters"] = filters
        if headers is not UNSET:
            field_dict["headers"] = headers
        if ordered is not UNSET:
            field_dict["ordered"] = ordered
        if rate_per_second is not UNSET:
            field_dict["rate_per_second"] = rate_per_second
        if settings is not UNSET:
            field_dict["settings"] = settings
        if transformation is not UNSET:
            field_dict["transformation"] = transformation
        if transformation_sample is not UNSET:
            field_dict["transformation_sample"] = transformation_sample
        if url is not UNSET:
            field_dict["url"] = url

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_patch_body_headers import EndpointPatchBodyHeaders # noqa: PLC0415
        from ..models.endpoint_patch_body_transformation_sample import EndpointPatchBodyTransformationSample # noqa: PLC0415
        from ..models.target_credentials import TargetCredentials # noqa: PLC0415
        from ..models.target_settings import TargetSettings # noqa: PLC0415
        d = dict(src_dict)
        concurrency = d.pop("concurrency", UNSET)

        _credentials = d.pop("credentials", UNSET)
        credentials: TargetCredentials | Unset
        if isinstance(_credentials,  Unset):
            credentials = UNSET
        else:
            credentials = TargetCredentials.from_dict(_credentials)




        description = d.pop("description", UNSET)

        expression = d.pop("expression", UNSET)

        filters = cast(list[str], d.pop("filters", UNSET))


        _headers = d.pop("headers", UNSET)
        headers: EndpointPatchBodyHeaders | Unset
        if isinstance(_headers,  Unset):
            headers = UNSET
        else:
            headers = EndpointPatchBodyHeaders.from_dict(_headers)




        ordered = d.pop("ordered", UNSET)

        rate_per_second = d.pop("rate_per_second", UNSET)

        _settings = d.pop("settings", UNSET)
        settings: TargetSettings | Unset
        if isinstance(_settings,  Unset):
            settings = UNSET
        else:
            settings = TargetSettings.from_dict(_settings)




        transformation = d.pop("transformation", UNSET)

        _transformation_sample = d.pop("transformation_sample", UNSET)
        transformation_sample: EndpointPatchBodyTransformationSample | Unset
        if isinstance(_transformation_sample,  Unset):
            transformation_sample = UNSET
        else:
            transformation_sample = EndpointPatchBodyTransformationSample.from_dict(_transformation_sample)




        url = d.pop("url", UNSET)

        endpoint_patch_body = cls(
            concurrency=concurrency,
            credentials=credentials,
            description=description,
            expression=expression,
            filters=filters,
            headers=headers,
            ordered=ordered,
            rate_per_second=rate_per_second,
            settings=settings,
            transformation=transformation,
            transformation_sample=transformation_sample,
            url=url,
        )

        return endpoint_patch_body

