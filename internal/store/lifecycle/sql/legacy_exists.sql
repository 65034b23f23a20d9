SELECT to_regclass('inbox_duplicates_v1') IS NOT NULL
