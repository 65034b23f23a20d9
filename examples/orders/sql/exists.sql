-- Whether an operation was recorded under a business key.
SELECT EXISTS (SELECT 1 FROM order_line_operations WHERE business_key = $1)
