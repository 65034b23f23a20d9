-- +goose Up
-- The orders' own schema, beside Sluice's in the Sluice database: effects
-- and their bookkeeping (dead letters, intents) commit in one transaction.

-- The order as its events describe it: a projection, guarded by the
-- order's version, then the order Sluice accepted its events in.
CREATE TABLE orders (
    tenant_id  uuid   NOT NULL,
    order_id   text   NOT NULL,
    status     text   NOT NULL,
    total      bigint NOT NULL,
    version    bigint NOT NULL,
    inbox_id   bigint NOT NULL,
    event_id   text   NOT NULL,
    PRIMARY KEY (tenant_id, order_id)
);

-- One row per operation on an order line (reserve, release): its business
-- key makes it happen once whatever the number of events asking for it.
CREATE TABLE order_line_operations (
    business_key text   PRIMARY KEY,
    tenant_id    uuid   NOT NULL,
    order_id     text   NOT NULL,
    line_id      text   NOT NULL,
    sku          text   NOT NULL,
    quantity     bigint NOT NULL,
    operation    text   NOT NULL,
    event_id     text   NOT NULL
);

-- Stock, shared by every order of a tenant naming the SKU: written by a
-- counter, in SKU order, once per batch.
CREATE TABLE stock (
    tenant_id uuid   NOT NULL,
    sku       text   NOT NULL,
    available bigint NOT NULL,
    PRIMARY KEY (tenant_id, sku)
);

-- +goose Down
DROP TABLE stock;
DROP TABLE order_line_operations;
DROP TABLE orders;
