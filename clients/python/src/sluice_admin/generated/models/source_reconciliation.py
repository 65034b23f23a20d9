from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
from uuid import UUID

if TYPE_CHECKING:
  from ..models.reconcile_run import ReconcileRun
  from ..models.reconcile_status import ReconcileStatus





T = TypeVar("T", bound="SourceReconciliation")



@_attrs_define
class SourceReconciliation:
    """ 
        Attributes:
            runs (list[ReconcileRun]): Its latest runs, newest first, refused ones included.
            source_id (UUID):
            status (ReconcileStatus | Unset):
     """

    runs: list[ReconcileRun]
    source_id: UUID
    status: ReconcileStatus | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.reconcile_run import ReconcileRun # noqa: PLC0415
        from ..models.reconcile_status import ReconcileStatus # noqa: PLC0415
        runs = []
        for runs_item_data in self.runs:
            runs_item = runs_item_data.to_dict()
            runs.append(runs_item)



        source_id = str(self.source_id)

        status: dict[str, Any] | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "runs": runs,
            "source_id": source_id,
        })
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.reconcile_run import ReconcileRun # noqa: PLC0415
        from ..models.reconcile_status import ReconcileStatus # noqa: PLC0415
        d = dict(src_dict)
        runs = []
        _runs = d.pop("runs")
        for runs_item_data in (_runs):
            runs_item = ReconcileRun.from_dict(runs_item_data)



            runs.append(runs_item)


        source_id = UUID(d.pop("source_id"))




        _status = d.pop("status", UNSET)
        status: ReconcileStatus | Unset
        if isinstance(_status,  Unset):
            status = UNSET
        else:
            status = ReconcileStatus.from_dict(_status)




        source_reconciliation = cls(
            runs=runs,
            source_id=source_id,
            status=status,
        )

        return source_reconciliation

