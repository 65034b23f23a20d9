-- Whether queue rows are written (true while a deliverer of the release
-- before runs): set to $1, returning a row only when it changed.
UPDATE delivery_queue_rows SET written = $1, changed_at = now() WHERE singleton AND written <> $1 RETURNING written
