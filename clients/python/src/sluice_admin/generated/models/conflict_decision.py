from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.conflict_decision_outcome import ConflictDecisionOutcome
from ..types import UNSET, Unset






T = TypeVar("T", bound="ConflictDecision")



@_attrs_define
class ConflictDecision:
    """ 
        Attributes:
            outcome (ConflictDecisionOutcome): dismissed: the content that stands is right and the newcomer was noise;
                resolved: it was set right another way (the provider sent it again under a new id, a reconciliation, a
                correction).
            note (str | Unset): Why, for the next person who reads it.
     """

    outcome: ConflictDecisionOutcome
    note: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        outcome = self.outcome.value

        note = self.note


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "outcome": outcome,
        })
        if note is not UNSET:
            field_dict["note"] = note

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        outcome = ConflictDecisionOutcome(d.pop("outcome"))




        note = d.pop("note", UNSET)

        conflict_decision = cls(
            outcome=outcome,
            note=note,
        )

        return conflict_decision

