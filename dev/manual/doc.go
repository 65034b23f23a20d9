// Package manual holds the tests of Sluice's manual: README.md, the door,
// and docs/, one Markdown page per subject indexed by docs/README.md. They
// keep it true: every relative link names a file and a heading that exist,
// README.md stays a door, every shell block a reader would type is marked,
// and the marked ones run against a real pipeline.
package manual
