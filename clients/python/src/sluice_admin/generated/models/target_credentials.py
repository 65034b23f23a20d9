from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="TargetCredentials")



@_attrs_define
class TargetCredentials:
    """ 
        Attributes:
            password (str): Its password; sqs: the secret access key.
            username (str): The user name; sqs: the access key id.
     """

    password: str
    username: str





    def to_dict(self) -> dict[str, Any]:
        password = self.password

        username = self.username


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "password": password,
            "username": username,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        password = d.pop("password")

        username = d.pop("username")

        target_credentials = cls(
            password=password,
            username=username,
        )

        return target_credentials

