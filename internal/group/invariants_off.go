//go:build !invariants

package group

const invariantsEnabled = false
