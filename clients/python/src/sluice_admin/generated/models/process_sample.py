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
  from ..models.process_sample_answers import ProcessSampleAnswers
  from ..models.process_sample_groups import ProcessSampleGroups





T = TypeVar("T", bound="ProcessSample")



@_attrs_define
class ProcessSample:
    """ 
        Attributes:
            at (datetime.datetime):
            answers (ProcessSampleAnswers | Unset): This process's ingest answers since it started, by outcome or rejection
                reason (sluice_ingest_requests_total summed over kind and code): the difference of two samples is what was
                answered between them; absent where it does not ingest.
            groups (ProcessSampleGroups | Unset): Each consumer group's lag in records (-1: the group never ran); absent
                when Kafka was not read.
            slot_lag_bytes (int | Unset): WAL the relay's slot retained; absent when the slot was not read or does not
                exist.
     """

    at: datetime.datetime
    answers: ProcessSampleAnswers | Unset = UNSET
    groups: ProcessSampleGroups | Unset = UNSET
    slot_lag_bytes: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.process_sample_answers import ProcessSampleAnswers # noqa: PLC0415
        from ..models.process_sample_groups import ProcessSampleGroups # noqa: PLC0415
        at = self.at.isoformat()

        answers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.answers, Unset):
            answers = self.answers.to_dict()

        groups: dict[str, Any] | Unset = UNSET
        if not isinstance(self.groups, Unset):
            groups = self.groups.to_dict()

        slot_lag_bytes = self.slot_lag_bytes


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "at": at,
        })
        if answers is not UNSET:
            field_dict["answers"] = answers
        if groups is not UNSET:
            field_dict["groups"] = groups
        if slot_lag_bytes is not UNSET:
            field_dict["slot_lag_bytes"] = slot_lag_bytes

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.process_sample_answers import ProcessSampleAnswers # noqa: PLC0415
        from ..models.process_sample_groups import ProcessSampleGroups # noqa: PLC0415
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))




        _answers = d.pop("answers", UNSET)
        answers: ProcessSampleAnswers | Unset
        if isinstance(_answers,  Unset):
            answers = UNSET
        else:
            answers = ProcessSampleAnswers.from_dict(_answers)




        _groups = d.pop("groups", UNSET)
        groups: ProcessSampleGroups | Unset
        if isinstance(_groups,  Unset):
            groups = UNSET
        else:
            groups = ProcessSampleGroups.from_dict(_groups)




        slot_lag_bytes = d.pop("slot_lag_bytes", UNSET)

        process_sample = cls(
            at=at,
            answers=answers,
            groups=groups,
            slot_lag_bytes=slot_lag_bytes,
        )

        return process_sample

