-- Whether dead letter id $1 was ever issued (identities are never reused:
-- an issued id that is gone was replayed and deleted by the lifecycle
-- manager past the payload horizon, or erased with its tenant).
SELECT $1 <= coalesce(pg_sequence_last_value(pg_get_serial_sequence('dead_letters', 'id')::regclass), 0)
