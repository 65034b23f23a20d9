SELECT to_regclass('dispatch_log') IS NOT NULL
