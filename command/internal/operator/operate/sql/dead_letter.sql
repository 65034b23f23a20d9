-- One dead letter with what it was consumed as: key, headers and payload
-- (the record's value; empty when the body travelled by claim).
SELECT key, headers, payload FROM dead_letters WHERE id = $1
