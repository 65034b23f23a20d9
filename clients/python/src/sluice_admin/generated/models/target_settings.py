from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.target_settings_sasl_mechanism import TargetSettingsSaslMechanism
from ..types import UNSET, Unset






T = TypeVar("T", bound="TargetSettings")



@_attrs_define
class TargetSettings:
    """ 
        Attributes:
            ca (str | Unset): PEM certificates the target's TLS certificate is verified against; absent: the system roots.
            exchange (str | Unset): rabbitmq: the exchange published to; absent: the default exchange (the routing key is
                then a queue's name).
            region (str | Unset): sqs: the AWS region requests are signed for (required), e.g. eu-west-1.
            routing_key (str | Unset): rabbitmq: the routing key of every message (required).
            sasl_mechanism (TargetSettingsSaslMechanism | Unset): kafka: SASL mechanism, with the credentials; absent: no
                SASL.
            tls (bool | Unset): kafka: connect with TLS (required unless the deployment allows plain-text targets).
            topic (str | Unset): kafka: the topic produced to (required).
     """

    ca: str | Unset = UNSET
    exchange: str | Unset = UNSET
    region: str | Unset = UNSET
    routing_key: str | Unset = UNSET
    sasl_mechanism: TargetSettingsSaslMechanism | Unset = UNSET
    tls: bool | Unset = UNSET
    topic: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        ca = self.ca

        exchange = self.exchange

        region = self.region

        routing_key = self.routing_key

        sasl_mechanism: str | Unset = UNSET
        if not isinstance(self.sasl_mechanism, Unset):
            sasl_mechanism = self.sasl_mechanism.value


        tls = self.tls

        topic = self.topic


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if ca is not UNSET:
            field_dict["ca"] = ca
        if exchange is not UNSET:
            field_dict["exchange"] = exchange
        if region is not UNSET:
            field_dict["region"] = region
        if routing_key is not UNSET:
            field_dict["routing_key"] = routing_key
        if sasl_mechanism is not UNSET:
            field_dict["sasl_mechanism"] = sasl_mechanism
        if tls is not UNSET:
            field_dict["tls"] = tls
        if topic is not UNSET:
            field_dict["topic"] = topic

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ca = d.pop("ca", UNSET)

        exchange = d.pop("exchange", UNSET)

        region = d.pop("region", UNSET)

        routing_key = d.pop("routing_key", UNSET)

        _sasl_mechanism = d.pop("sasl_mechanism", UNSET)
        sasl_mechanism: TargetSettingsSaslMechanism | Unset
        if isinstance(_sasl_mechanism,  Unset):
            sasl_mechanism = UNSET
        else:
            sasl_mechanism = TargetSettingsSaslMechanism(_sasl_mechanism)




        tls = d.pop("tls", UNSET)

        topic = d.pop("topic", UNSET)

        target_settings = cls(
            ca=ca,
            exchange=exchange,
            region=region,
            routing_key=routing_key,
            sasl_mechanism=sasl_mechanism,
            tls=tls,
            topic=topic,
        )

        return target_settings

