-- Whether the operation a taken business key recorded is this one.
SELECT sku = $2 AND quantity = $3 FROM order_line_operations WHERE business_key = $1
