from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.correction import Correction
  from ..models.dead_letter import DeadLetter
  from ..models.delivery import Delivery
  from ..models.effect import Effect
  from ..models.endpoint_delivery import EndpointDelivery
  from ..models.event import Event
  from ..models.send import Send
  from ..models.taker import Taker
  from ..models.verification import Verification
  from ..models.waiting import Waiting





T = TypeVar("T", bound="Trail")



@_attrs_define
class Trail:
    """ 
        Attributes:
            corrections (list[Correction] | None):
            dead_letters (list[DeadLetter] | None):
            deliveries (list[Delivery] | None):
            destinations (list[EndpointDelivery] | None):
            effects (list[Effect] | None):
            event (Event):
            sends (list[Send] | None):
            taken_now_by_todays_endpoints (list[Taker] | None): Which of the tenant's enabled endpoints take the event under
                their filters and expressions as they are NOW: a reading of today's endpoints, not what the fan-out decided when
                the event passed (destinations holds what it wrote).
            verification (Verification):
            waiting (list[Waiting] | None):
     """

    corrections: list[Correction] | None
    dead_letters: list[DeadLetter] | None
    deliveries: list[Delivery] | None
    destinations: list[EndpointDelivery] | None
    effects: list[Effect] | None
    event: Event
    sends: list[Send] | None
    taken_now_by_todays_endpoints: list[Taker] | None
    verification: Verification
    waiting: list[Waiting] | None





    def to_dict(self) -> dict[str, Any]:
        from ..models.correction import Correction # noqa: PLC0415
        from ..models.dead_letter import DeadLetter # noqa: PLC0415
        from ..models.delivery import Delivery # noqa: PLC0415
        from ..models.effect import Effect # noqa: PLC0415
        from ..models.endpoint_delivery import EndpointDelivery # noqa: PLC0415
        from ..models.event import Event # noqa: PLC0415
        from ..models.send import Send # noqa: PLC0415
        from ..models.taker import Taker # noqa: PLC0415
        from ..models.verification import Verification # noqa: PLC0415
        from ..models.waiting import Waiting # noqa: PLC0415
        corrections: list[dict[str, Any]] | None
        if isinstance(self.corrections, list):
            corrections = []
            for corrections_type_0_item_data in self.corrections:
                corrections_type_0_item = corrections_type_0_item_data.to_dict()
                corrections.append(corrections_type_0_item)


        else:
            corrections = self.corrections

        dead_letters: list[dict[str, Any]] | None
        if isinstance(self.dead_letters, list):
            dead_letters = []
            for dead_letters_type_0_item_data in self.dead_letters:
                dead_letters_type_0_item = dead_letters_type_0_item_data.to_dict()
                dead_letters.append(dead_letters_type_0_item)


        else:
            dead_letters = self.dead_letters

        deliveries: list[dict[str, Any]] | None
        if isinstance(self.deliveries, list):
            deliveries = []
            for deliveries_type_0_item_data in self.deliveries:
                deliveries_type_0_item = deliveries_type_0_item_data.to_dict()
                deliveries.append(deliveries_type_0_item)


        else:
            deliveries = self.deliveries

        destinations: list[dict[str, Any]] | None
        if isinstance(self.destinations, list):
            destinations = []
            for destinations_type_0_item_data in self.destinations:
                destinations_type_0_item = destinations_type_0_item_data.to_dict()
                destinations.append(destinations_type_0_item)


        else:
            destinations = self.destinations

        effects: list[dict[str, Any]] | None
        if isinstance(self.effects, list):
            effects = []
            for effects_type_0_item_data in self.effects:
                effects_type_0_item = effects_type_0_item_data.to_dict()
                effects.append(effects_type_0_item)


        else:
            effects = self.effects

        event = self.event.to_dict()

        sends: list[dict[str, Any]] | None
        if isinstance(self.sends, list):
            sends = []
            for sends_type_0_item_data in self.sends:
                sends_type_0_item = sends_type_0_item_data.to_dict()
                sends.append(sends_type_0_item)


        else:
            sends = self.sends

        taken_now_by_todays_endpoints: list[dict[str, Any]] | None
        if isinstance(self.taken_now_by_todays_endpoints, list):
            taken_now_by_todays_endpoints = []
            for taken_now_by_todays_endpoints_type_0_item_data in self.taken_now_by_todays_endpoints:
                taken_now_by_todays_endpoints_type_0_item = taken_now_by_todays_endpoints_type_0_item_data.to_dict()
                taken_now_by_todays_endpoints.append(taken_now_by_todays_endpoints_type_0_item)


        else:
            taken_now_by_todays_endpoints = self.taken_now_by_todays_endpoints

        verification = self.verification.to_dict()

        waiting: list[dict[str, Any]] | None
        if isinstance(self.waiting, list):
            waiting = []
            for waiting_type_0_item_data in self.waiting:
                waiting_type_0_item = waiting_type_0_item_data.to_dict()
                waiting.append(waiting_type_0_item)


        else:
            waiting = self.waiting


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "corrections": corrections,
            "dead_letters": dead_letters,
            "deliveries": deliveries,
            "destinations": destinations,
            "effects": effects,
            "event": event,
            "sends": sends,
            "taken_now_by_todays_endpoints": taken_now_by_todays_endpoints,
            "verification": verification,
            "waiting": waiting,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.correction import Correction # noqa: PLC0415
        from ..models.dead_letter import DeadLetter # noqa: PLC0415
        from ..models.delivery import Delivery # noqa: PLC0415
        from ..models.effect import Effect # noqa: PLC0415
        from ..models.endpoint_delivery import EndpointDelivery # noqa: PLC0415
        from ..models.event import Event # noqa: PLC0415
        from ..models.send import Send # noqa: PLC0415
        from ..models.taker import Taker # noqa: PLC0415
        from ..models.verification import Verification # noqa: PLC0415
        from ..models.waiting import Waiting # noqa: PLC0415
        d = dict(src_dict)
        def _parse_corrections(data: object) -> list[Correction] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                corrections_type_0 = []
                _corrections_type_0 = data
                for corrections_type_0_item_data in (_corrections_type_0):
                    corrections_type_0_item = Correction.from_dict(corrections_type_0_item_data)



                    corrections_type_0.append(corrections_type_0_item)

                return corrections_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Correction] | None, data)

        corrections = _parse_corrections(d.pop("corrections"))


        def _parse_dead_letters(data: object) -> list[DeadLetter] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                dead_letters_type_0 = []
                _dead_letters_type_0 = data
                for dead_letters_type_0_item_data in (_dead_letters_type_0):
                    dead_letters_type_0_item = DeadLetter.from_dict(dead_letters_type_0_item_data)



                    dead_letters_type_0.append(dead_letters_type_0_item)

                return dead_letters_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[DeadLetter] | None, data)

        dead_letters = _parse_dead_letters(d.pop("dead_letters"))


        def _parse_deliveries(data: object) -> list[Delivery] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                deliveries_type_0 = []
                _deliveries_type_0 = data
                for deliveries_type_0_item_data in (_deliveries_type_0):
                    deliveries_type_0_item = Delivery.from_dict(deliveries_type_0_item_data)



                    deliveries_type_0.append(deliveries_type_0_item)

                return deliveries_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Delivery] | None, data)

        deliveries = _parse_deliveries(d.pop("deliveries"))


        def _parse_destinations(data: object) -> list[EndpointDelivery] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                destinations_type_0 = []
                _destinations_type_0 = data
                for destinations_type_0_item_data in (_destinations_type_0):
                    destinations_type_0_item = EndpointDelivery.from_dict(destinations_type_0_item_data)



                    destinations_type_0.append(destinations_type_0_item)

                return destinations_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[EndpointDelivery] | None, data)

        destinations = _parse_destinations(d.pop("destinations"))


        def _parse_effects(data: object) -> list[Effect] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                effects_type_0 = []
                _effects_type_0 = data
                for effects_type_0_item_data in (_effects_type_0):
                    effects_type_0_item = Effect.from_dict(effects_type_0_item_data)



                    effects_type_0.append(effects_type_0_item)

                return effects_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Effect] | None, data)

        effects = _parse_effects(d.pop("effects"))


        event = Event.from_dict(d.pop("event"))




        def _parse_sends(data: object) -> list[Send] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                sends_type_0 = []
                _sends_type_0 = data
                for sends_type_0_item_data in (_sends_type_0):
                    sends_type_0_item = Send.from_dict(sends_type_0_item_data)



                    sends_type_0.append(sends_type_0_item)

                return sends_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Send] | None, data)

        sends = _parse_sends(d.pop("sends"))


        def _parse_taken_now_by_todays_endpoints(data: object) -> list[Taker] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                taken_now_by_todays_endpoints_type_0 = []
                _taken_now_by_todays_endpoints_type_0 = data
                for taken_now_by_todays_endpoints_type_0_item_data in (_taken_now_by_todays_endpoints_type_0):
                    taken_now_by_todays_endpoints_type_0_item = Taker.from_dict(taken_now_by_todays_endpoints_type_0_item_data)



                    taken_now_by_todays_endpoints_type_0.append(taken_now_by_todays_endpoints_type_0_item)

                return taken_now_by_todays_endpoints_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Taker] | None, data)

        taken_now_by_todays_endpoints = _parse_taken_now_by_todays_endpoints(d.pop("taken_now_by_todays_endpoints"))


        verification = Verification.from_dict(d.pop("verification"))




        def _parse_waiting(data: object) -> list[Waiting] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                waiting_type_0 = []
                _waiting_type_0 = data
                for waiting_type_0_item_data in (_waiting_type_0):
                    waiting_type_0_item = Waiting.from_dict(waiting_type_0_item_data)



                    waiting_type_0.append(waiting_type_0_item)

                return waiting_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Waiting] | None, data)

        waiting = _parse_waiting(d.pop("waiting"))


        trail = cls(
            corrections=corrections,
            dead_letters=dead_letters,
            deliveries=deliveries,
            destinations=destinations,
            effects=effects,
            event=event,
            sends=sends,
            taken_now_by_todays_endpoints=taken_now_by_todays_endpoints,
            verification=verification,
            waiting=waiting,
        )

        return trail

