// Package effect puts a team's own effects behind Sluice's guarantees:
// each applied exactly once although events arrive at least once, late or
// out of order; rewinds that change nothing; poison set aside as dead
// letters while its partition flows.
//
// A Group names the event types it takes and the Handler that applies
// them. Sluice's consumer runtime reads the topics those types are
// published to, one worker per Kafka partition (so the events of one
// resource, keyed by it, are applied in the order they were accepted, and
// different resources in parallel), applies a batch of records in one
// Postgres transaction of the Sluice database, and commits the Kafka
// offsets only after that transaction committed. A crash between the two
// applies the batch again: a handler's effects must therefore be
// idempotent, which the helpers here make them:
//
//   - Once records an operation under its business key and tells whether
//     this call recorded it: a grant, a reservation, an alert happen once
//     however many events ask for them.
//   - Project writes a projection's row only when an event's version
//     supersedes the stored one: any arrival order ends in the same state.
//   - Tx.Emit writes an intent (a message for another service, delivered
//     to tenants' endpoints and the deployment's) as an outbox row in the
//     same transaction: it exists exactly when its effect does.
//   - A Counter nets a batch's changes to shared rows (a balance, a stock
//     level) and applies them at the end in key order, so concurrent batches
//     take those rows' locks in one order and hold them only until commit.
//
// Two levels of handler: Each, a function applying one record decoded into
// the handler's own Go type, for the common case; and Handler with Batch,
// for a set-based handler applying a whole batch with a few statements.
//
// pgx (github.com/jackc/pgx/v5) is part of this package's contract: a
// handler writes its effects with the batch's pgx transaction. No type of
// the Kafka client is: a Record carries its topic, partition and offset as
// plain values.
//
// effecttest, beside this package, is the kit a team runs in its CI to
// prove its group keeps these promises. Sluice's command line (package
// command) runs a binary's groups: see docs/effects.md.
package effect
