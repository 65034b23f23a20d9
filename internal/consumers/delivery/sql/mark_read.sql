-- Endpoint $1's mark: its low-water id, its exceptions and its version
-- (no row: 0 and version 0; its deliveries are read from the first).
SELECT low, parked_ids, parked_keys, parked_from, version FROM delivery_marks WHERE endpoint_id = $1
