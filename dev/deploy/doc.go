// Package deploy holds the tests of the files that deploy Sluice: the
// compose file and the Kubernetes manifests. No Docker engine or cluster runs
// where the tests do, so each file is read with its own specification's
// loader (compose-go, the k8s.io/api types, strictly) and held to what the
// README promises about it.
package deploy
