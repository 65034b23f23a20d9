// Package pyorders holds the Go tests of the Python orders consumer beside
// it (pyorders/, run as python -m pyorders): the effect of examples/orders
// on the same tables, applied by a Kafka consumer of Sluice's records in
// Python, which passes the kit's scenarios through effecttest's Process
// driver. The Go code here is tests only; see docs/any-language.md.
package pyorders
