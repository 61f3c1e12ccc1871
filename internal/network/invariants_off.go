//go:build !invariants

package network

// invariantsEnabled turns on the checks of the "// Invariant:" comments; see
// invariants_on.go.
const invariantsEnabled = false
