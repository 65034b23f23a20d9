-- An endpoint's failure streak: started by its first failure, ended by a
-- 2xx. Returns when the streak began.
UPDATE endpoints SET failing_since = coalesce(failing_since, now())
WHERE id = $1
RETURNING failing_since
