from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.problem_kind import ProblemKind
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.error_detail import ErrorDetail





T = TypeVar("T", bound="Problem")



@_attrs_define
class Problem:
    """ 
        Attributes:
            code (str | Unset): The sub-kind of a refusal a client tells apart, also the last segment of type
                (https://sluice.dev/problems/<code>): builtin, quota, incompatible, already_replayed, dead_letter_expired,
                group_active, reconcile_busy (409); replay_failed, reconcile_window, no_api_credentials (422). Absent: the kind
                says all.
            detail (str | Unset): What is wrong, for a person.
            errors (list[ErrorDetail] | None | Unset): Each input at fault: its location (body.name, query.since,
                path.tenant_id) and why. value is only ever a path or query parameter's: a body field's is never repeated, it
                may be a secret.
            failed_id (int | Unset): Replay routes: the dead letter that failed again (it stays pending).
            instance (str | Unset): A URI reference to this occurrence.
            kind (ProblemKind | Unset): The kind of refusal (one per status; absent for a failure, 500, and for 405).
            replayed (list[int] | None | Unset): Filtered replay: the letters replayed before it stopped.
            request_id (str | Unset): The answer's X-Request-Id, also in the process's log line of the request.
            resource_id (str | Unset): A create sent again with its Idempotency-Key whose first answer held a secret shown
                once: the id it made.
            status (int | Unset): The HTTP status.
            title (str | Unset): The status's summary.
            type_ (str | Unset): A URI reference to documentation of the problem type. Default: 'about:blank'.
     """

    code: str | Unset = UNSET
    detail: str | Unset = UNSET
    errors: list[ErrorDetail] | None | Unset = UNSET
    failed_id: int | Unset = UNSET
    instance: str | Unset = UNSET
    kind: ProblemKind | Unset = UNSET
    replayed: list[int] | None | Unset = UNSET
    request_id: str | Unset = UNSET
    resource_id: str | Unset = UNSET
    status: int | Unset = UNSET
    title: str | Unset = UNSET
    type_: str | Unset = 'about:blank'





    def to_dict(self) -> dict[str, Any]:
        from ..models.error_detail import ErrorDetail # noqa: PLC0415
        code = self.code

        detail = self.detail

        errors: list[dict[str, Any]] | None | Unset
        if isinstance(self.errors, Unset):
            errors = UNSET
        elif isinstance(self.errors, list):
            errors = []
            for errors_type_0_item_data in self.errors:
                errors_type_0_item = errors_type_0_item_data.to_dict()
                errors.append(errors_type_0_item)


        else:
            errors = self.errors

        failed_id = self.failed_id

        instance = self.instance

        kind: str | Unset = UNSET
        if not isinstance(self.kind, Unset):
            kind = self.kind.value


        replayed: list[int] | None | Unset
        if isinstance(self.replayed, Unset):
            replayed = UNSET
        elif isinstance(self.replayed, list):
            replayed = self.replayed


        else:
            replayed = self.replayed

        request_id = self.request_id

        resource_id = self.resource_id

        status = self.status

        title = self.title

        type_ = self.type_


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if code is not UNSET:
            field_dict["code"] = code
        if detail is not UNSET:
            field_dict["detail"] = detail
        if errors is not UNSET:
            field_dict["errors"] = errors
        if failed_id is not UNSET:
            field_dict["failed_id"] = failed_id
        if instance is not UNSET:
            field_dict["instance"] = instance
        if kind is not UNSET:
            field_dict["kind"] = kind
        if replayed is not UNSET:
            field_dict["replayed"] = replayed
        if request_id is not UNSET:
            field_dict["request_id"] = request_id
        if resource_id is not UNSET:
            field_dict["resource_id"] = resource_id
        if status is not UNSET:
            field_dict["status"] = status
        if title is not UNSET:
            field_dict["title"] = title
        if type_ is not UNSET:
            field_dict["type"] = type_

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.error_detail import ErrorDetail # noqa: PLC0415
        d = dict(src_dict)
        code = d.pop("code", UNSET)

        detail = d.pop("detail", UNSET)

        def _parse_errors(data: object) -> list[ErrorDetail] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                errors_type_0 = []
                _errors_type_0 = data
                for errors_type_0_item_data in (_errors_type_0):
                    errors_type_0_item = ErrorDetail.from_dict(errors_type_0_item_data)



                    errors_type_0.append(errors_type_0_item)

                return errors_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[ErrorDetail] | None | Unset, data)

        errors = _parse_errors(d.pop("errors", UNSET))


        failed_id = d.pop("failed_id", UNSET)

        instance = d.pop("instance", UNSET)

        _kind = d.pop("kind", UNSET)
        kind: ProblemKind | Unset
        if isinstance(_kind,  Unset):
            kind = UNSET
        else:
            kind = ProblemKind(_kind)




        def _parse_replayed(data: object) -> list[int] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                replayed_type_0 = cast(list[int], data)

                return replayed_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[int] | None | Unset, data)

        replayed = _parse_replayed(d.pop("replayed", UNSET))


        request_id = d.pop("request_id", UNSET)

        resource_id = d.pop("resource_id", UNSET)

        status = d.pop("status", UNSET)

        title = d.pop("title", UNSET)

        type_ = d.pop("type", UNSET)

        problem = cls(
            code=code,
            detail=detail,
            errors=errors,
            failed_id=failed_id,
            instance=instance,
            kind=kind,
            replayed=replayed,
            request_id=request_id,
            resource_id=resource_id,
            status=status,
            title=title,
            type_=type_,
        )

        return problem

