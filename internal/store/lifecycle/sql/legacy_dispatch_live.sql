-- Whether the dispatcher's table of before migration 00016 still holds a
-- send within the key horizon ($1) (or a dispatcher of that version still
-- writes to it). Run only while it exists.
SELECT EXISTS (SELECT 1 FROM dispatch_log WHERE sent_at >= $1)
