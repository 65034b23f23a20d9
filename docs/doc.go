// Package docs is Sluice's manual: one Markdown page per subject, indexed by
// docs/README.md, with the repository's README.md as the door. It holds no
// code; its tests keep the manual true: every relative link names a file and
// heading that exist, the shell blocks a reader would type are marked, and
// the marked ones run against a real pipeline.
package docs
