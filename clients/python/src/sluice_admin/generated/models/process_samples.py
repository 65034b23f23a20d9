from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.process_sample import ProcessSample





T = TypeVar("T", bound="ProcessSamples")



@_attrs_define
class ProcessSamples:
    """ 
        Attributes:
            every_seconds (int):
            samples (list[ProcessSample]):
     """

    every_seconds: int
    samples: list[ProcessSample]





    def to_dict(self) -> dict[str, Any]:
        from ..models.process_sample import ProcessSample # noqa: PLC0415
        every_seconds = self.every_seconds

        samples = []
        for samples_item_data in self.samples:
            samples_item = samples_item_data.to_dict()
            samples.append(samples_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "every_seconds": every_seconds,
            "samples": samples,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.process_sample import ProcessSample # noqa: PLC0415
        d = dict(src_dict)
        every_seconds = d.pop("every_seconds")

        samples = []
        _samples = d.pop("samples")
        for samples_item_data in (_samples):
            samples_item = ProcessSample.from_dict(samples_item_data)



            samples.append(samples_item)


        process_samples = cls(
            every_seconds=every_seconds,
            samples=samples,
        )

        return process_samples

