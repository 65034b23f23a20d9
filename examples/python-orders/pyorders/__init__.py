"""The orders effect of examples/orders as a Python consumer of Sluice's Kafka
records: python -m pyorders (see docs/any-language.md)."""
