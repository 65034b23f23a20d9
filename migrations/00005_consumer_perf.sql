-- +goose Up
-- A grant's workspace is checked where it is found, not again per row. The
-- credits consumer resolves it from workspace_customers (which references
-- workspaces) in the same transaction that writes the grant, and workspaces
-- are never deleted; the foreign key only repeated that check, as a trigger
-- per inserted row that also share-locks the workspace row. Measured on a
-- set-based batch of 5,000 grants, the trigger cost as much as the insert
-- itself, with every partition's batch locking the same few workspace rows.
ALTER TABLE credit_grants DROP CONSTRAINT credit_grants_workspace_id_fkey;

-- +goose Down
ALTER TABLE credit_grants ADD CONSTRAINT credit_grants_workspace_id_fkey
    FOREIGN KEY (workspace_id) REFERENCES workspaces (id);
