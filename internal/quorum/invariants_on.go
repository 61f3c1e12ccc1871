//go:build invariants

package quorum

// invariants enables expensive consistency checks (go test -tags invariants).
const invariants = true
