"""python -m pyorders: the orders consumer, configured by its environment
(SLUICE_DATABASE_URL, SLUICE_KAFKA_BROKERS, SLUICE_TOPIC_PREFIX, ORDERS_*:
see consumer.Config), until SIGTERM."""

import logging
import sys

from .consumer import Config, Consumer

logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
Consumer(Config.from_env()).run()
