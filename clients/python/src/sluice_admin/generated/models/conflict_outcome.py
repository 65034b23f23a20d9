from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.conflict_outcome_outcome import ConflictOutcomeOutcome
from typing import cast
import datetime






T = TypeVar("T", bound="ConflictOutcome")



@_attrs_define
class ConflictOutcome:
    """ 
        Attributes:
            actor (str): Who decided (the token's name).
            decided_at (datetime.datetime):
            note (str): Why, in the operator's words.
            outcome (ConflictOutcomeOutcome): dismissed: the content that stands is right, the newcomer was noise; resolved:
                set right another way (a new event, a reconciliation, a correction).
     """

    actor: str
    decided_at: datetime.datetime
    note: str
    outcome: ConflictOutcomeOutcome





    def to_dict(self) -> dict[str, Any]:
        actor = self.actor

        decided_at = self.decided_at.isoformat()

        note = self.note

        outcome = self.outcome.value


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "actor": actor,
            "decided_at": decided_at,
            "note": note,
            "outcome": outcome,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        actor = d.pop("actor")

        decided_at = datetime.datetime.fromisoformat(d.pop("decided_at"))




        note = d.pop("note")

        outcome = ConflictOutcomeOutcome(d.pop("outcome"))




        conflict_outcome = cls(
            actor=actor,
            decided_at=decided_at,
            note=note,
            outcome=outcome,
        )

        return conflict_outcome

