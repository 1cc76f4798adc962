"""Single Message Transforms and the predicates that guard them.

Configured with Kafka Connect's keys::

    "transforms": "route,mask",
    "transforms.route.type": "RegexRouter",          # or the Java class name
    "transforms.route.regex": "(.*)", "transforms.route.replacement": "copy-$1",
    "transforms.route.predicate": "isOrders", "transforms.route.negate": "false",
    "predicates": "isOrders",
    "predicates.isOrders.type": "TopicNameMatches", "predicates.isOrders.pattern": "orders.*"

``apply`` runs on the task's thread for every record; it must not block. Returning None
drops the record. Raising DataError makes the record subject to ``errors.tolerance``.
Transforms whose class differs for keys and values (``$Key``/``$Value`` in Java) take a
``variant`` of "key" or "value".
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, Literal, TypeVar

from hub.api.config import ConfigModel
from hub.api.record import ConnectRecord

R = TypeVar("R", bound=ConnectRecord)
Variant = Literal["key", "value"]


class Transformation(ABC, Generic[R]):
    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    config_model: ClassVar[type[ConfigModel]] = ConfigModel
    variants: ClassVar[tuple[Variant, ...]] = ()  # ("key", "value") if it has $Key/$Value forms
    description: ClassVar[str] = ""

    def __init__(self, config: Any, variant: Variant | None = None) -> None:
        """``config`` is the validated ``config_model`` instance."""
        self.config = config
        self.variant = variant

    @abstractmethod
    def apply(self, record: R) -> R | None:
        """The transformed record, or None to drop it."""

    def close(self) -> None:
        pass


class Predicate(ABC, Generic[R]):
    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    config_model: ClassVar[type[ConfigModel]] = ConfigModel
    description: ClassVar[str] = ""

    def __init__(self, config: Any) -> None:
        self.config = config

    @abstractmethod
    def test(self, record: R) -> bool:
        """True if the guarded transform should apply to ``record``."""
