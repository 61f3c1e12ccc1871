//go:build !invariants

package share

const invariantsEnabled = false
