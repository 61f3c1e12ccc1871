//go:build !invariants

package txn

const invariantsEnabled = false
