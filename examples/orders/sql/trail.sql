-- An order's effects, as the trail of an event about it shows them ($1
-- source, $2 account, $3 order id, $4 tenant): the order's projection, a
-- probe of its primary key, and its confirmation, a probe of its business
-- key. The group keeps no Kafka position nor processing time.
SELECT 'orders', 'projection', '', $1::text || '/' || $2 || '/' || order_id, event_id, inbox_id, '', 0, status,
       NULL, NULL, NULL, NULL
FROM orders WHERE tenant_id = $4 AND order_id = $3
UNION ALL
SELECT 'orders', 'confirmation', operation, business_key, event_id, NULL, '', 0, '', NULL, NULL, NULL, NULL
FROM order_line_operations WHERE business_key = $1::text || '/' || $2 || '/' || $3 || '/confirm'
