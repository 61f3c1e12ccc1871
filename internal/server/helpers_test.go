package server

import (
	"errors"
	"hash/crc32"
)

func errorIs(err, target error) bool { return errors.Is(err, target) }

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }
