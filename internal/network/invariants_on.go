//go:build invariants

package network

// invariantsEnabled turns on the checks of the "// Invariant:" comments; the
// invariants build tag is for tests and CI, never for production builds.
const invariantsEnabled = true
