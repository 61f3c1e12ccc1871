//go:build !invariants

package controller

const invariantsEnabled = false
